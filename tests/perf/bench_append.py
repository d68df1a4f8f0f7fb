"""Issue 19 item 1 — batched append runs at >= 30,000 events/s and costs at most 2x the
floors of its primitives.

Measured: per event, `with store.write(): journal.append(store, txn, person, events)` for a
batch of note_added events (~80-character texts learned in a conversation), including the
commit and the checkpoint-file update.

Baseline (same run, same machine), per event, each primitive timed alone over a batch of
the same shape:
  - crypto.seal (XChaCha20-Poly1305) of the text with its associated data
  - canonical JSON of the body, and of the chained header
  - chain hashing: chain.payload_hash + chain.entry_hash (BLAKE2b-256)
  - the signed head: one Ed25519 signature per batch (store/signed_heads.py), per event
  - a bare SQLAlchemy executemany insert of the very rows append wrote (journal, payload and
    note_state rows, read back from the store) into the same tables of a scratch store with
    the same schema, indexes and pragmas, in one transaction, plus its commit.
The append batch and every floor are timed in turn, round after round (interleaved), so a
busy moment on the machine hits both. The verdict uses best-of (floors); medians are shown.

Under --postgres (issue 19 item 8) the store and the scratch store are databases in a
throwaway PostgreSQL cluster (fsync on), so the bare insert and its commit are
PostgreSQL's; the primitives are the same.

Run: .venv/bin/python tests/perf/bench_append.py [--quick] [--repeat N] [--profile] [--postgres]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any

from _bench import (
    Backend,
    JournalMaker,
    Mix,
    Task,
    Timing,
    Verdict,
    backend,
    finish,
    fmt_time,
    header,
    interleaved,
    new_store,
    parser,
    print_verdicts,
    profile,
    table,
    workdir,
)
from sqlalchemy import delete, insert, select

from engram.model.events import NewEvent
from engram.model.ids import PersonId
from engram.runtime.conversations import start_conversation
from engram.store import chain, crypto, journal, schema, signed_heads
from engram.store.contexts import journal_payload as payload_aad
from engram.store.journal import journal_header
from engram.store.store import Store

TARGET = 2.0
RATE = 30_000  # events/s
PERSON = PersonId("alice")


@dataclass
class Rows:
    """One batch's rows as append wrote them, for the bare-insert baseline."""

    journal: list[dict[str, Any]]
    payloads: list[dict[str, Any]]
    notes: list[dict[str, Any]]
    sources: list[dict[str, Any]]


def _read_back(store: Store, first_seq: int, last_seq: int) -> Rows:
    J, JP, N, S = (
        schema.journal,
        schema.journal_payloads,
        schema.note_state,
        schema.note_sources,
    )
    with store.read() as conn:
        rows = [
            dict(r)
            for r in conn.execute(
                select(J).where(J.c.person == PERSON, J.c.seq.between(first_seq, last_seq))
            ).mappings()
        ]
        payloads = [
            dict(r)
            for r in conn.execute(
                select(JP).where(JP.c.person == PERSON, JP.c.seq.between(first_seq, last_seq))
            ).mappings()
        ]
        notes = [
            dict(r)
            for r in conn.execute(
                select(N).where(N.c.person == PERSON, N.c.created_seq.between(first_seq, last_seq))
            ).mappings()
        ]
        ids = [n["id"] for n in notes]
        sources = [
            dict(r)
            for r in conn.execute(select(S).where(S.c.person == PERSON, S.c.note.in_(ids)))
            .mappings()
            .all()
        ]
    return Rows(rows, payloads, notes, sources)


class BareInsert:
    """Inserts copies of `rows` into a scratch store's tables, one transaction per batch."""

    def __init__(self, scratch: Store, rows: Rows) -> None:
        self.scratch = scratch
        self.rows = rows
        self.round = 0
        self.parts: dict[str, Timing] = {
            name: Timing()
            for name in ("journal rows", "payload rows", "note rows", "commit", "note_sources")
        }

    def run(self) -> None:
        self.round += 1
        shift = self.round * 10_000_000
        tag = f"_{self.round}"
        journal_rows = [{**r, "seq": r["seq"] + shift} for r in self.rows.journal]
        payload_rows = [{**r, "seq": r["seq"] + shift} for r in self.rows.payloads]
        note_rows = [{**r, "id": r["id"] + tag} for r in self.rows.notes]
        source_rows = [{**r, "note": r["note"] + tag} for r in self.rows.sources]
        count = len(journal_rows)
        marks: list[float] = []
        engine = self.scratch.engine
        with engine.connect() as connection:
            connection = connection.execution_options(write=True)
            transaction = connection.begin()
            marks.append(time.perf_counter())
            connection.execute(insert(schema.journal), journal_rows)
            marks.append(time.perf_counter())
            connection.execute(insert(schema.journal_payloads), payload_rows)
            marks.append(time.perf_counter())
            connection.execute(insert(schema.note_state), note_rows)
            marks.append(time.perf_counter())
            transaction.commit()
            marks.append(time.perf_counter())
            # Not in the floor: the projection's per-note source rows (delete + insert).
            with connection.begin():
                start = time.perf_counter()
                S = schema.note_sources
                ids = [r["id"] for r in note_rows]
                connection.execute(delete(S).where(S.c.person == PERSON, S.c.note.in_(ids)))
                connection.execute(insert(S), source_rows)
                sources_time = time.perf_counter() - start
        names = ("journal rows", "payload rows", "note rows", "commit")
        for index, name in enumerate(names):
            self.parts[name].add((marks[index + 1] - marks[index]) / count)
        self.parts["note_sources"].add(sources_time / count)


def main() -> None:
    started = time.perf_counter()
    args = parser(__doc__ or "").parse_args()
    batch = 100 if args.quick else 1_000
    repeat = args.repeat or (5 if args.quick else 15)
    header(f"bench_append: journal.append, batches of {batch} note_added events", args)
    with workdir(args) as folder, backend(args, folder) as where:
        run(where, args, batch, repeat, started)


def run(where: Backend, args: argparse.Namespace, batch: int, repeat: int, started: float) -> None:
    store = new_store(where.location("append"))
    scratch = new_store(where.location("scratch"))
    conversation = start_conversation(store, [PERSON]).id
    maker = JournalMaker(conversation, mix=Mix(added=1, restated=0, scope_changed=0, deleted=0))

    pending: list[list[NewEvent]] = []
    inner = Timing()

    def prepare() -> None:
        pending.append(maker.batch(batch))

    def append_batch() -> None:
        events = pending.pop()
        with store.write() as txn:
            start = time.perf_counter()
            journal.append(store, txn, PERSON, events)
            inner.add((time.perf_counter() - start) / batch)

    # A first, untimed batch: its rows (read back) are what the bare insert re-inserts.
    prepare()
    append_batch()
    last = journal_head(store)
    rows = _read_back(store, last - batch + 1, last)
    assert len(rows.journal) == batch and len(rows.notes) == batch, "read-back mismatch"

    # ---- inputs for the primitive floors: one batch of the same shape ---------------
    events = maker.batch(batch)
    with store.read() as conn:
        key_ref, key = store.keys.text_key(conn, PERSON, conversation)
    store_id = store.info.id
    texts = [(e.text or "").encode("utf-8") for e in events]
    aads = [payload_aad(store_id, PERSON, 10_000 + i, key_ref) for i in range(batch)]
    bodies = [e.body.to_json() for e in events]
    body_texts = [crypto.canonical_json(b) for b in bodies]
    at = store.now_micros()
    sealed = [crypto.seal(key, t, a) for t, a in zip(texts, aads, strict=True)]
    heads = [
        journal_header(
            PERSON, 10_000 + i, at, "extractor", "note_added", conversation, None, b, key_ref
        )
        for i, b in enumerate(body_texts)
    ]
    prev = chain.genesis(store_id, chain.journal_chain(PERSON))
    entries = [
        chain.entry_hash(prev, h, chain.payload_hash(s)) for h, s in zip(heads, sealed, strict=True)
    ]
    signer = store.signer

    def f_seal() -> None:
        for t, a in zip(texts, aads, strict=True):
            crypto.seal(key, t, a)

    def f_body_json() -> None:
        for b in bodies:
            crypto.canonical_json(b)

    def f_header_json() -> None:
        for i, b in enumerate(body_texts):
            journal_header(
                PERSON, 10_000 + i, at, "extractor", "note_added", conversation, None, b, key_ref
            )

    def f_hash() -> None:
        for h, s in zip(heads, sealed, strict=True):
            chain.entry_hash(prev, h, chain.payload_hash(s))

    hidden = store.hidden_name(chain.journal_chain(PERSON))

    def f_sign() -> None:  # one signed head for the whole batch
        signer.sign(signed_heads.statement(store_id, hidden, len(entries), entries[-1], at))

    bare = BareInsert(scratch, rows)

    # ---- rounds: the measured batch and every floor, one after the other ------------
    warmup = 1
    timed = interleaved(
        {
            "append": Task(append_batch, batch, prepare),
            "crypto.seal (XChaCha20-Poly1305)": Task(f_seal, batch),
            "canonical JSON: body": Task(f_body_json, batch),
            "canonical JSON: chained header": Task(f_header_json, batch),
            "chain hashing (payload + entry)": Task(f_hash, batch),
            "Ed25519: one signed head per batch": Task(f_sign, batch),
            "bare insert": Task(bare.run),
        },
        repeat=repeat,
        warmup=warmup,
    )
    appended = timed.pop("append")
    del timed["bare insert"]
    inner.samples = inner.samples[1 + warmup :]
    for part in bare.parts.values():
        part.samples = part.samples[warmup:]
    floors: dict[str, Timing] = dict(timed)
    floors["insert journal rows (executemany)"] = bare.parts["journal rows"]
    floors["insert payload rows (executemany)"] = bare.parts["payload rows"]
    floors["insert note_state rows (executemany)"] = bare.parts["note rows"]
    durable = "fsync on" if where.postgres else "WAL, synchronous=FULL"
    floors[f"commit ({where.name}, {durable})"] = bare.parts["commit"]

    floor_best = sum(t.best for t in floors.values())
    floor_median = sum(t.median for t in floors.values())

    print()
    rows_out = [[name, fmt_time(t.best), fmt_time(t.median)] for name, t in floors.items()]
    rows_out.append(["= sum of floors", fmt_time(floor_best), fmt_time(floor_median)])
    rows_out.append(["", "", ""])
    rows_out.append(
        [
            "(not in floor) note_sources delete+insert",
            fmt_time(bare.parts["note_sources"].best),
            fmt_time(bare.parts["note_sources"].median),
        ]
    )
    rows_out.append(["journal.append call alone", fmt_time(inner.best), fmt_time(inner.median)])
    rows_out.append(
        [
            "write txn: append + commit + checkpoint",
            fmt_time(appended.best),
            fmt_time(appended.median),
        ]
    )
    print(table(["per event", "best", "median"], rows_out))
    print(
        f"   {batch} events per batch, {repeat} timed rounds (+{warmup} warm-up), each round "
        "timing one append batch and every floor in turn; "
        f"throughput {1 / appended.median:,.0f} events/s"
    )

    verdicts = [
        Verdict(
            "append / sum of floors (best)",
            appended.best,
            floor_best,
            TARGET,
            "best-of batches, per event; baseline = sum of the per-primitive floors above",
        ),
        Verdict(
            "append / sum of floors (median)",
            appended.median,
            floor_median,
            TARGET,
            "the same with medians",
            informational=True,
        ),
        Verdict(
            "append time per event / (1 s / 30,000)",
            appended.median,
            1 / RATE,
            1.0,
            f"append >= {RATE:,} events/s in batches of {batch} (median); ratio <= 1 passes",
        ),
    ]
    print_verdicts("bench_append", verdicts)

    if args.profile:
        prepare()
        profile(append_batch)
    store.close()
    scratch.close()
    finish(verdicts, args, started)


def journal_head(store: Store) -> int:
    with store.read() as conn:
        return journal.head_seq(conn, PERSON)


if __name__ == "__main__":
    main()
