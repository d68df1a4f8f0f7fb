"""How long unlocking with a passphrase takes: Argon2id at the limits Engram records.

Target: about half a second on a laptop (DESIGN.md, "Crypto details that matter").
Baseline in the same run: PyNaCl's MODERATE and SENSITIVE presets, for comparison.
Run: .venv/bin/python tests/perf/bench_kdf.py
"""

from __future__ import annotations

import statistics
import time

import nacl.pwhash

from engram.store import crypto


def _time(params: crypto.KdfParams, rounds: int = 3) -> float:
    salt = crypto.random_salt()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        crypto.passphrase_key("correct horse battery staple", salt, params)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    rows = [
        ("engram default", crypto.CALIBRATED_KDF),
        (
            "pynacl moderate",
            crypto.KdfParams(
                nacl.pwhash.argon2id.OPSLIMIT_MODERATE, nacl.pwhash.argon2id.MEMLIMIT_MODERATE
            ),
        ),
        (
            "pynacl interactive",
            crypto.KdfParams(
                nacl.pwhash.argon2id.OPSLIMIT_INTERACTIVE, nacl.pwhash.argon2id.MEMLIMIT_INTERACTIVE
            ),
        ),
    ]
    print(f"{'limits':<20} {'ops':>4} {'MiB':>6} {'seconds':>8}")
    for name, params in rows:
        seconds = _time(params)
        print(f"{name:<20} {params.opslimit:>4} {params.memlimit >> 20:>6} {seconds:>8.3f}")
    default = _time(crypto.CALIBRATED_KDF)
    verdict = "PASS" if 0.2 <= default <= 1.0 else "MISS"
    print(f"unlock with the default limits: {default:.3f} s (target about 0.5 s) {verdict}")


if __name__ == "__main__":
    main()
