"""Target 2 — verifying a store costs at most 2x opening it, the raw crypto and a bare fold.

The store holds one person whose journal has 50,000 events (--quick: 5,000): about 60 %
note_added, 20 % restated, 10 % scope_changed, 10 % deleted.

Measured: Store.open + store.verify.verify(store) (what `engram verify` does).

Baseline (same run), the sum of:
  - open: Store.open alone;
  - raw crypto: with plain sqlite3, read every journal row, rebuild its chained header
    (canonical JSON), recompute its entry hash (hashlib BLAKE2b-256, byte-identical to
    crypto.digest), check seq and prev links, verify its Ed25519 signature with one VerifyKey;
    then re-hash every payload and compare with the declared payload hash;
  - bare fold: a plain Python loop over those rows (json.loads of each body) applying the
    events to dicts, no engine.

Run: .venv/bin/python tests/perf/bench_verify.py [--quick] [--repeat N] [--profile]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import nacl.signing
from _bench import (
    JournalMaker,
    Task,
    Timing,
    Verdict,
    append_events,
    finish,
    fmt_time,
    header,
    interleaved,
    new_store,
    open_store,
    parser,
    print_verdicts,
    profile,
    table,
    workdir,
)
from sqlalchemy import text as sa_text

from engram.model.ids import PersonId
from engram.runtime.conversations import start_conversation
from engram.store import chain, pseudonyms
from engram.store.verify import verify

TARGET = 2.0
PERSON = PersonId("alice")

Row = tuple[Any, ...]


def _framed_digest(*parts: bytes) -> bytes:
    framed = b"".join(len(part).to_bytes(8, "big") + part for part in parts)
    return hashlib.blake2b(framed, digest_size=32).digest()


def raw_checks(path: Path, store_id: str, verify_key: bytes, aliases: dict[str, str]) -> list[Row]:
    """Every chain, hash and signature check of the journal, with plain sqlite3. Headers
    name the actor by its pseudonym (store/pseudonyms.py): `aliases` maps each actor."""
    connection = sqlite3.connect(path)
    try:
        rows = connection.execute(
            "SELECT person, seq, at, actor, type, cause_conversation, cause_turn, body, key_ref,"
            " payload_hash, prev_hash, entry_hash, signature"
            " FROM journal WHERE person = ? ORDER BY seq",
            (PERSON,),
        ).fetchall()
        key = nacl.signing.VerifyKey(verify_key)
        encode = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
        prev = chain.genesis(store_id, chain.journal_chain(PERSON))
        expected = 1
        declared: dict[int, bytes | None] = {}
        for row in rows:
            head = encode([*row[:3], aliases[row[3]], *row[4:9]]).encode("utf-8")
            entry = _framed_digest(prev, head, row[9] or b"")
            if row[1] != expected or row[10] != prev or row[11] != entry:
                raise AssertionError(f"raw check failed at entry {row[1]}")
            key.verify(entry, row[12])
            declared[row[1]] = row[9]
            prev = entry
            expected += 1
        for seq, sealed in connection.execute(
            "SELECT seq, sealed FROM journal_payloads WHERE person = ?", (PERSON,)
        ):
            if _framed_digest(b"payload", sealed) != declared[seq]:
                raise AssertionError(f"payload {seq} differs")
    finally:
        connection.close()
    return rows


def bare_fold(rows: list[Row]) -> dict[str, dict[str, Any]]:
    """The events applied to plain dicts: the least a replay has to do."""
    notes: dict[str, dict[str, Any]] = {}
    for row in rows:
        kind = row[4]
        body = json.loads(row[7])
        if kind == "note_added":
            notes[body["note"]] = {
                "kind": body["kind"],
                "scope": body["scope"],
                "status": "active",
                "confidence": body["confidence_bp"],
                "sources": [body.get("source")],
                "from": row[2],
                "seq": row[1],
                "changes": [],
            }
        elif kind == "restated":
            note = notes[body["note"]]
            note["sources"].append(body["source"])
            note["changes"].append((row[1], kind))
        elif kind == "scope_changed":
            note = notes[body["note"]]
            note["scope"] = body["scope"]
            note["changes"].append((row[1], kind))
        elif kind == "deleted":
            note = notes[body["note"]]
            note["status"] = "deleted"
            note["to"] = row[2]
    return notes


def main() -> None:
    started = time.perf_counter()
    args = parser(__doc__ or "").parse_args()
    events = 5_000 if args.quick else 50_000
    repeat = args.repeat or (3 if args.quick else 5)
    header(f"bench_verify: verify a store with one journal of {events:,} events", args)
    with workdir(args) as folder:
        run(folder, args, events, repeat, started)


def run(folder: Path, args: argparse.Namespace, events: int, repeat: int, started: float) -> None:
    path = folder / "verify.engram"
    store = new_store(path)
    conversation = start_conversation(store, [PERSON]).id
    maker = JournalMaker(conversation)
    # start_conversation wrote the person_created event; fill up to `events` in total.
    built = append_events(store, PERSON, maker, events - 1)
    counts = ", ".join(f"{k.value} {v:,}" for k, v in maker.counts.items())
    print(f"   built in {built.seconds:.1f} s ({built.rate:,.0f} events/s): {counts}")
    store_id, verify_key = store.info.id, store.info.verify_key
    with store.read() as conn:
        actors = conn.execute(sa_text("SELECT DISTINCT actor FROM journal")).scalars().all()
    aliases = {actor: pseudonyms.pseudonym(store, actor) for actor in actors}
    store.close()

    parts: dict[str, Timing] = {"open": Timing(), "verify()": Timing()}

    def open_and_verify() -> None:
        start = time.perf_counter()
        opened = open_store(path)
        middle = time.perf_counter()
        report = verify(opened)
        end = time.perf_counter()
        opened.close()
        if not report.ok or report.entries < events:
            raise AssertionError(f"verify failed: {report.problems}")
        parts["open"].add(middle - start)
        parts["verify()"].add(end - middle)

    def open_only() -> None:
        open_store(path).close()

    rows_box: list[list[Row]] = []

    def raw() -> None:
        rows_box[:] = [raw_checks(path, store_id, verify_key, aliases)]

    warmup = 1
    timed = interleaved(
        {
            "measured": Task(open_and_verify),
            "open": Task(open_only),
            "raw": Task(raw),
            "fold": Task(lambda: bare_fold(rows_box[0])),
        },
        repeat=repeat,
        warmup=warmup,
    )
    for timing in parts.values():
        timing.samples = timing.samples[warmup:]
    measured, opened, crypto_time, folded = (timed[k] for k in ("measured", "open", "raw", "fold"))
    assert len(rows_box[0]) == events

    base_best = opened.best + crypto_time.best + folded.best
    base_median = opened.median + crypto_time.median + folded.median
    print()
    out = [
        ["baseline: Store.open", fmt_time(opened.best), fmt_time(opened.median)],
        [
            "baseline: raw crypto (sqlite3 read, hashes, signatures)",
            fmt_time(crypto_time.best),
            fmt_time(crypto_time.median),
        ],
        ["baseline: bare fold loop over dicts", fmt_time(folded.best), fmt_time(folded.median)],
        ["= baseline sum", fmt_time(base_best), fmt_time(base_median)],
        ["", "", ""],
        [
            "measured: Store.open (inside open + verify)",
            fmt_time(parts["open"].best),
            fmt_time(parts["open"].median),
        ],
        [
            "measured: verify.verify(store)",
            fmt_time(parts["verify()"].best),
            fmt_time(parts["verify()"].median),
        ],
        ["= measured: open + verify", fmt_time(measured.best), fmt_time(measured.median)],
    ]
    print(table(["component", "best", "median"], out))
    print(
        f"   {events:,} events, {repeat} timed rounds (+{warmup} warm-up) of all four, "
        "interleaved; "
        f"verify() {events / parts['verify()'].median:,.0f} events/s"
    )

    verdicts = [
        Verdict(
            "open+verify / baseline (median)",
            measured.median,
            base_median,
            TARGET,
            "baseline = Store.open + raw crypto checks + bare fold loop",
        ),
        Verdict(
            "open+verify / baseline (best)",
            measured.best,
            base_best,
            TARGET,
            "the same with best-of",
            informational=True,
        ),
    ]
    print_verdicts("bench_verify", verdicts)
    if args.profile:
        reopened = open_store(path)
        profile(lambda: verify(reopened))
        reopened.close()
    finish(verdicts, args, started)


if __name__ == "__main__":
    main()
