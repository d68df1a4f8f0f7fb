"""Issue 19 item 1 — verify runs at >= 50,000 events/s and costs at most 2x its floor.

The store holds one person whose journal has 50,000 events (--quick: 5,000): about 60 %
note_added, 20 % restated, 10 % scope_changed, 10 % deleted, written in batches of 1,000
(each write signs its chains' heads once: store/signed_heads.py).

Measured: store.verify.verify(store) on an open store (what `engram verify` does once the
store is open), and Store.open + verify (informational).

Floor (same run), the sum of:
  - quick check: SQLite's own `PRAGMA quick_check`, with plain sqlite3;
  - raw read: with plain sqlite3, read every journal row and its payload (one query),
    rebuild its chained header (canonical JSON), recompute its entry hash (hashlib
    BLAKE2b-256, byte-identical to crypto.digest), check seq and prev links, re-hash its
    payload; then one Ed25519 check of the journal's signed head;
  - bare fold: a plain Python loop over the decoded events (json.loads of each body)
    applying them to dicts, no engine.
Targets: verify() / floor <= 2 (median), and verify() >= 50,000 events/s (median).

Under --postgres (issue 19 item 8) the store is a database in a throwaway PostgreSQL
cluster; the raw read uses psycopg, and PostgreSQL has no quick_check to add.

Run: .venv/bin/python tests/perf/bench_verify.py [--quick] [--repeat N] [--profile] [--postgres]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import time
from typing import Any

import nacl.signing
from _bench import (
    Backend,
    JournalMaker,
    Task,
    Verdict,
    append_events,
    backend,
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
from engram.store import chain, pseudonyms, signed_heads
from engram.store.verify import verify

TARGET = 2.0
RATE = 50_000  # events/s
PERSON = PersonId("alice")

Row = tuple[Any, ...]


def _framed_digest(*parts: bytes) -> bytes:
    framed = b"".join(len(part).to_bytes(8, "big") + part for part in parts)
    return hashlib.blake2b(framed, digest_size=32).digest()


def _connect(where: str) -> Any:
    """A plain DB-API connection to the store: sqlite3 on a file, psycopg on PostgreSQL
    (placeholders differ: `?` and `%s`)."""
    if where.startswith("postgresql"):
        import psycopg

        return psycopg.connect(where.replace("postgresql+psycopg", "postgresql"))
    return sqlite3.connect(where)


def _sql(where: str, query: str) -> str:
    return query.replace("?", "%s") if where.startswith("postgresql") else query


def quick_check(path: str) -> None:
    """SQLite's own page check, as fast as SQLite makes it (PostgreSQL has none)."""
    if path.startswith("postgresql"):
        return
    connection = sqlite3.connect(path)
    try:
        if connection.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            raise AssertionError("quick_check failed")
    finally:
        connection.close()


def raw_checks(
    path: str, store_id: str, verify_key: bytes, aliases: dict[str, str], hidden: str
) -> list[Row]:
    """Every link and hash check of the journal and its payloads, with plain sqlite3 (or
    psycopg), and the one signature of its signed head. Headers name the actor by its
    pseudonym (store/pseudonyms.py): `aliases` maps each actor."""
    connection = _connect(path)
    try:
        rows = connection.execute(
            _sql(
                path,
                "SELECT j.person, j.seq, j.at, j.actor, j.type, j.cause_conversation,"
                " j.cause_turn, j.body, j.key_ref, j.payload_hash, j.prev_hash, j.entry_hash,"
                " p.sealed FROM journal j LEFT JOIN journal_payloads p"
                " ON p.person = j.person AND p.seq = j.seq WHERE j.person = ? ORDER BY j.seq",
            ),
            (PERSON,),
        ).fetchall()
        encode = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
        prev = chain.genesis(store_id, chain.journal_chain(PERSON))
        expected = 1
        for row in rows:
            head = encode([*row[:3], aliases[row[3]], *row[4:9]]).encode("utf-8")
            entry = _framed_digest(prev, head, row[9] or b"")
            if row[1] != expected or row[10] != prev or row[11] != entry:
                raise AssertionError(f"raw check failed at entry {row[1]}")
            if row[12] is not None and _framed_digest(b"payload", row[12]) != row[9]:
                raise AssertionError(f"payload {row[1]} differs")
            prev = entry
            expected += 1
        length, head_hash, at, signature = connection.execute(
            _sql(path, "SELECT length, head, at, signature FROM chain_heads WHERE chain = ?"),
            (hidden,),
        ).fetchone()
        if length != expected - 1 or head_hash != prev:
            raise AssertionError("the signed head differs")
        statement = signed_heads.statement(store_id, hidden, length, head_hash, at)
        nacl.signing.VerifyKey(verify_key).verify(statement, signature)
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
    with workdir(args) as folder, backend(args, folder) as where:
        run(where, args, events, repeat, started)


def run(where: Backend, args: argparse.Namespace, events: int, repeat: int, started: float) -> None:
    path = where.location("verify")
    store = new_store(path)
    conversation = start_conversation(store, [PERSON]).id
    maker = JournalMaker(conversation)
    # start_conversation wrote the person_created event; fill up to `events` in total.
    built = append_events(store, PERSON, maker, events - 1, batch=1_000)
    counts = ", ".join(f"{k.value} {v:,}" for k, v in maker.counts.items())
    print(f"   built in {built.seconds:.1f} s ({built.rate:,.0f} events/s): {counts}")
    store_id, verify_key = store.info.id, store.info.verify_key
    with store.read() as conn:
        actors = conn.execute(sa_text("SELECT DISTINCT actor FROM journal")).scalars().all()
    aliases = {actor: pseudonyms.pseudonym(store, actor) for actor in actors}
    hidden = store.hidden_name(chain.journal_chain(PERSON))
    store.close()

    opened_store = open_store(path)

    def verify_only() -> None:
        report = verify(opened_store)
        if not report.ok or report.entries < events:
            raise AssertionError(f"verify failed: {report.problems}")

    def open_and_verify() -> None:
        reopened = open_store(path)
        try:
            verify(reopened)
        finally:
            reopened.close()

    rows_box: list[list[Row]] = []

    def raw() -> None:
        rows_box[:] = [raw_checks(path, store_id, verify_key, aliases, hidden)]

    warmup = 1
    timed = interleaved(
        {
            "verify": Task(verify_only),
            "open+verify": Task(open_and_verify),
            "quick": Task(lambda: quick_check(path)),
            "raw": Task(raw),
            "fold": Task(lambda: bare_fold(rows_box[0])),
        },
        repeat=repeat,
        warmup=warmup,
    )
    measured, whole, quick, raw_time, folded = (
        timed[k] for k in ("verify", "open+verify", "quick", "raw", "fold")
    )
    assert len(rows_box[0]) == events

    base_best = quick.best + raw_time.best + folded.best
    base_median = quick.median + raw_time.median + folded.median
    print()
    out = [
        [
            "floor: PostgreSQL has no quick_check (0)"
            if where.postgres
            else "floor: SQLite PRAGMA quick_check",
            fmt_time(quick.best),
            fmt_time(quick.median),
        ],
        [
            "floor: raw read + BLAKE2b of every entry and payload, 1 signed head",
            fmt_time(raw_time.best),
            fmt_time(raw_time.median),
        ],
        ["floor: bare fold loop over dicts", fmt_time(folded.best), fmt_time(folded.median)],
        ["= floor", fmt_time(base_best), fmt_time(base_median)],
        ["", "", ""],
        ["measured: verify.verify(store)", fmt_time(measured.best), fmt_time(measured.median)],
        ["(info) Store.open + verify", fmt_time(whole.best), fmt_time(whole.median)],
    ]
    print(table(["component", "best", "median"], out))
    rate = events / measured.median
    print(
        f"   {events:,} events, {repeat} timed rounds (+{warmup} warm-up) of all five, "
        f"interleaved; verify() {rate:,.0f} events/s (median), "
        f"{events / measured.best:,.0f} events/s (best)"
    )

    verdicts = [
        Verdict(
            "verify / floor (median)",
            measured.median,
            base_median,
            TARGET,
            "floor = SQLite quick_check + raw read and BLAKE2b of every entry + bare fold loop",
        ),
        Verdict(
            "verify / floor (best)",
            measured.best,
            base_best,
            TARGET,
            "the same with best-of",
            informational=True,
        ),
        Verdict(
            "verify time per event / (1 s / 50,000)",
            measured.median / events,
            1 / RATE,
            1.0,
            f"verify >= {RATE:,} events/s (median); ratio <= 1 passes",
        ),
    ]
    print_verdicts("bench_verify", verdicts)
    if args.profile:
        profile(lambda: verify(opened_store))
    opened_store.close()
    finish(verdicts, args, started)


if __name__ == "__main__":
    main()
