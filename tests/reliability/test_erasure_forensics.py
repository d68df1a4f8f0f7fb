"""Erasure forensics (issue 9, reliability suite): ciphertexts captured before an erase,
looked for in the database file, its WAL, its shared memory and every side file after it.

- With a concurrent reader (an Engram process, or a program that is not Engram, holding a
  read transaction): an `engram person erase` that exits 0 must leave 0 bytes; one that
  cannot finish must exit non-zero with one sentence, and the next open after the reader
  is gone must leave 0 bytes.
- With a crash between steps (SIGKILL at each fault point of an erase, or at a random
  moment during it): the next open must leave 0 bytes, and verify must pass.

Counted: bytes left after an exit 0 (must be 0), bytes left after the next open, silent
failures (non-zero exit without one plain sentence), verify failures.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from engram.model.ids import PersonId
from engram.store import faults, journal
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE
from tests.forensics import fill, traces
from tests.integration.test_erasure_while_open import Reader
from tests.reliability.conftest import FULL, size
from tests.store_worker import run_cli

PERSON, OTHER = PersonId("canary"), PersonId("other")
ROOT = Path(__file__).resolve().parents[2]
READER_TRIALS = size(2, 20)
CRASH_TRIALS = size(4, 40)
ERASE_POINTS = [faults.ERASE_COMMITTED, faults.ERASE_CHECKPOINTED, faults.ERASE_SCRUBBED]


def _prepared(tmp_path: Path, name: str) -> tuple[Path, str, list[bytes]]:
    path = tmp_path / f"{name}.engram"
    store = Store.create(str(path), passphrase=PASSPHRASE, use_keyring=False)
    try:
        canary, captured = fill(store, PERSON, OTHER)
    finally:
        store.close()
    return path, canary, captured


def _reopen_and_check(
    path: Path,
    captured: list[bytes],
    canary: str,
    counts: Counter[str],
    details: list[str],
    label: str,
) -> None:
    store = Store.open(str(path), passphrase=PASSPHRASE)  # finishes what was left pending
    try:
        left = traces(path, captured, canary)
        counts["bytes left after the next open"] += len(left)
        if left:
            details.append(f"{label}: after the next open: {left[:3]}")
        report = verify(store)
        if not report.ok:
            counts["verify failures"] += 1
            details.append(f"{label}: verify: {report.problems[:3]}")
    finally:
        store.close()


def _erase(path: Path, wait: float, crash_at: str | None = None):  # type: ignore[no-untyped-def]
    return run_cli(
        path,
        "person",
        "erase",
        "canary",
        "--confirm",
        "canary",
        "--wait",
        str(wait),
        crash_at=crash_at,
    )


def test_erasure_with_a_concurrent_reader(tmp_path: Path) -> None:
    counts: Counter[str] = Counter()
    details: list[str] = []
    for trial in range(READER_TRIALS):
        kind = ("hold-engram", "hold-sqlite")[trial % 2]
        path, canary, captured = _prepared(tmp_path, f"reader-{trial}")
        reader = Reader(kind, path, tmp_path, seconds=60)
        label = f"trial {trial} ({kind})"
        try:
            erased = _erase(path, wait=5 if kind == "hold-engram" else 0.5)
            counts["trials"] += 1
            if erased.returncode == 0:
                counts["exit 0"] += 1
                left = traces(path, captured, canary)
                counts["bytes left after an exit 0"] += len(left)
                if left:
                    details.append(f"{label}: exit 0 with {left[:3]}")
            else:
                counts["refused, pending"] += 1
                lines = erased.stderr.strip().splitlines()
                if len(lines) != 1 or "Traceback" in erased.stderr or "was erased" not in lines[0]:
                    counts["silent failures"] += 1
                    details.append(f"{label}: {erased.stderr[-500:]}")
        finally:
            reader.stop()
        _reopen_and_check(path, captured, canary, counts, details, label)
    print(f"\nerasure with a reader ({'full' if FULL else 'reduced'}): {json.dumps(counts)}")
    assert counts["exit 0"] and counts["refused, pending"]  # both ways really happened
    assert not details, "\n".join(details)


def _killed_at_random(path: Path, delay: float) -> int:
    """An erase killed with SIGKILL `delay` seconds after it began, wherever it then is."""
    env = {**os.environ, "ENGRAM_TEST_PASSPHRASE": PASSPHRASE}
    env.pop(faults.CRASH_ENV, None)
    eraser = subprocess.Popen(
        [sys.executable, "-m", "tests.store_worker", "erase", str(path), PERSON],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert eraser.stdout is not None
    assert eraser.stdout.readline().strip() == "erasing", eraser.communicate()
    time.sleep(delay)
    eraser.send_signal(signal.SIGKILL)
    eraser.communicate(timeout=60)
    return eraser.returncode


def _erased(path: Path) -> bool:
    store = Store.open(str(path), passphrase=PASSPHRASE)
    try:
        with store.read() as conn:
            return not journal.person_exists(conn, PERSON)
    finally:
        store.close()


def test_erasure_with_a_crash_between_steps(tmp_path: Path) -> None:
    counts: Counter[str] = Counter()
    details: list[str] = []
    rng = random.Random(9_0003)
    for trial in range(CRASH_TRIALS):
        path, canary, captured = _prepared(tmp_path, f"crash-{trial}")
        counts["trials"] += 1
        if trial % 2 == 0:  # at a fault point between the erase's steps
            point = ERASE_POINTS[(trial // 2) % len(ERASE_POINTS)]
            label = f"trial {trial} ({point})"
            erased = _erase(path, wait=5, crash_at=point)
            if erased.returncode != -signal.SIGKILL:
                counts["did not crash"] += 1
                details.append(f"{label}: exit {erased.returncode}: {erased.stderr[-300:]}")
        else:  # at a random moment
            delay = rng.uniform(0.0, 0.4)
            label = f"trial {trial} (killed after {delay:.2f}s)"
            code = _killed_at_random(path, delay)
            if code == 0:
                counts["finished before the kill"] += 1
                left = traces(path, captured, canary)
                counts["bytes left after an exit 0"] += len(left)
                if left:
                    details.append(f"{label}: exit 0 with {left[:3]}")
        if not _erased(path):
            counts["killed before the erase committed"] += 1
            continue  # nothing was erased, nothing was claimed: the data is rightly there
        counts["erase committed"] += 1
        _reopen_and_check(path, captured, canary, counts, details, label)
    print(f"\nerasure with a crash ({'full' if FULL else 'reduced'}): {json.dumps(counts)}")
    assert counts["erase committed"]
    assert not details, "\n".join(details)
