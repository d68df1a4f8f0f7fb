"""Issue 15 item 12 — a write's cost stays flat in store size: a note add at 100x the store
costs at most 1.3x what it costs at 1x.

Measured: `control.notes.add_note` on an open store (a person's own note: the journal
append, its commit, and the checkpoint line — the write `engram notes add` makes), on two
stores that differ only in size: 1x = 20 conversations among 2 persons, 100x = 2,000
conversations among 200 persons (each conversation: its key, its creation entry, one turn;
so 100x the chains the checkpoint keeps). Every add goes to the same person, whose journal
grows alike in both stores. Many adds are timed in a row and divided (the mean); the
checkpoint file's compaction (every few thousand writes at 100x, so rarely inside the
timed rounds) is timed on its own and added, spread over the writes between two of them.
The verdict compares median per-add times plus that share.

Baseline (same run): the floor of one write — a raw `sqlite3` insert of one ~300-byte row
and its commit, in WAL with synchronous=FULL (what Engram uses), plus one Ed25519
signature. Printed: each size against the floor, and 100x against 1x (the target).
Also printed: the checkpoint file's size at each store size, and — informational — the
same add with `Store.open` and `close` around it (what one CLI command pays).

Run: .venv/bin/python tests/perf/bench_checkpoint.py [--quick] [--repeat N] [--profile]
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from _bench import (
    PASSPHRASE,
    Task,
    Verdict,
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

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.conversation import EntryKind, Surface
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.store import checkpoint as checkpoint_module
from engram.store import conversation_log, journal
from engram.store.checkpoint_format import Step, encode_step
from engram.store.store import Store

TARGET = 1.3
WRITER = PersonId("writer")
BATCH = 100  # conversations per build transaction


def build(path: Path, conversations: int) -> None:
    """A store of `conversations` conversations (one turn each) among conversations/10
    persons, built through the store's own write path in batches."""
    store = new_store(path)
    persons = [PersonId(f"p{i}") for i in range(max(1, conversations // 10))]
    try:
        for start in range(0, conversations, BATCH):
            with store.write() as txn:
                for n in range(start, min(conversations, start + BATCH)):
                    person = persons[n % len(persons)]
                    journal.ensure_person(store, txn, person)
                    info = conversation_log.create(
                        store, txn, [person], surface=Surface.CHAT, incognito=False, agent=None
                    )
                    conversation_log.append_entry(
                        store,
                        txn,
                        info.id,
                        EntryKind.USER,
                        ref=f"t_{n:08x}",
                        author=person,
                        status="committed",
                        text=f"turn {n}: what the person said in this conversation",
                    )
        with store.write() as txn:
            journal.ensure_person(store, txn, WRITER)
    finally:
        store.close()


def fill_to_limit(store: Store) -> int:
    """Append signed one-chain steps (as note adds write them) until the next write would
    compact; returns how many it took — the writes between two compactions."""
    cp = store.checkpoint
    current = cp.read()
    assert current is not None
    hidden, head = next(iter(current.chains.items()))
    step = Step({hidden: head})
    fd = os.open(cp.path, os.O_RDWR)
    try:
        tail = cp._tail(fd)  # the writer's own view of the file's end
        size, serial, prev = tail.complete, tail.serial, tail.digest
        limit = max(
            checkpoint_module.COMPACT_FACTOR * tail.base_size, checkpoint_module.COMPACT_FLOOR
        )
        lines: list[bytes] = []
        while True:
            line, digest = encode_step(
                store.info.id, serial + 1, prev, tail.base_size, step, store.signer
            )
            if size + len(line) > limit:
                break
            lines.append(line)
            size, serial, prev = size + len(line), serial + 1, digest
        os.pwrite(fd, b"".join(lines), tail.complete)
    finally:
        os.close(fd)
    return len(lines) + 1


def compaction_share(store: Store, repeat: int) -> tuple[float, int, float]:
    """The checkpoint file's compaction at this size, on a file grown to its limit: its
    time (median), the writes between two of them, and so its cost per write."""
    cp = store.checkpoint
    times, between = [], 0
    for _ in range(repeat):
        between = fill_to_limit(store)
        with cp.locked():
            start = time.perf_counter()
            cp._compact(Step({}), store.signer)
            times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2], between, times[len(times) // 2] / between


class Floor:
    """One raw SQLite insert + commit (WAL, synchronous=FULL) and one Ed25519 signature."""

    def __init__(self, path: Path, store: Store) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body BLOB)")
        self.signer = store.signer
        self.body = b"x" * 300

    def run(self, count: int) -> None:
        for _ in range(count):
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("INSERT INTO t (body) VALUES (?)", (self.body,))
            self.db.execute("COMMIT")
            self.signer.sign(self.body[:32])


def main() -> None:
    started = time.perf_counter()
    args = parser(__doc__ or "").parse_args()
    small, large = (2, 200) if args.quick else (20, 2_000)
    repeat = args.repeat or (5 if args.quick else 15)
    adds = 20 if args.quick else 60
    header(f"bench_checkpoint: note add at {small} and {large} conversations", args)
    with workdir(args) as folder:
        paths = {"1x": folder / "small.engram", "100x": folder / "large.engram"}
        for (label, path), size in zip(paths.items(), (small, large), strict=True):
            t0 = time.perf_counter()
            build(path, size)
            print(f"   built {label}: {size:,} conversations in {time.perf_counter() - t0:.1f} s")
        stores = {label: open_store(path) for label, path in paths.items()}
        floor = Floor(folder / "floor.sqlite", stores["1x"])
        counter = [0]

        def adder(store: Store) -> Task:
            def run() -> None:
                session = PersonSession.open(store, WRITER)
                for _ in range(adds):
                    counter[0] += 1
                    add_note(session, f"note {counter[0]}", Kind.FACT, Scope.DIRECT)

            return Task(run, adds)

        def cold(path: Path) -> Task:
            def run() -> None:
                store = Store.open(str(path), passphrase=PASSPHRASE)
                counter[0] += 1
                add_note(
                    PersonSession.open(store, WRITER), f"cold {counter[0]}", Kind.FACT, Scope.DIRECT
                )
                store.close()

            return Task(run)

        timed = interleaved(
            {
                "note add, 1x": adder(stores["1x"]),
                "note add, 100x": adder(stores["100x"]),
                "floor": Task(lambda: floor.run(adds), adds),
                "open + note add + close, 1x": cold(paths["1x"]),
                "open + note add + close, 100x": cold(paths["100x"]),
            },
            repeat=repeat,
        )
        rows = [
            [name, fmt_time(t.best), fmt_time(t.median), f"{t.median / timed['floor'].median:.2f}x"]
            for name, t in timed.items()
        ]
        print()
        print(table(["measure", "best", "median", "median / floor"], rows))
        before = {label: store.checkpoint.path.stat().st_size for label, store in stores.items()}
        shares = {label: compaction_share(store, 3) for label, store in stores.items()}
        sizes = [
            [
                label,
                f"{before[label]:,} B",
                f"{store.checkpoint.path.stat().st_size:,} B",
                fmt_time(shares[label][0]),
                f"{shares[label][1]:,}",
                fmt_time(shares[label][2]),
            ]
            for label, store in stores.items()
        ]
        print()
        print(
            table(
                [
                    "store",
                    "file after the adds",
                    "its base",
                    "compaction",
                    "writes between",
                    "per write",
                ],
                sizes,
            )
        )
        small_t, large_t = timed["note add, 1x"], timed["note add, 100x"]
        small_cost = small_t.median + shares["1x"][2]
        large_cost = large_t.median + shares["100x"][2]
        verdicts = [
            Verdict(
                "note add, 100x vs 1x (median + compaction share)",
                large_cost,
                small_cost,
                TARGET,
                f"floor (raw insert + commit + one signature) {fmt_time(timed['floor'].median)}; "
                f"1x is {small_cost / timed['floor'].median:.2f}x it, 100x "
                f"{large_cost / timed['floor'].median:.2f}x",
            ),
            Verdict(
                "open + add + close, 100x vs 1x",
                timed["open + note add + close, 100x"].median,
                timed["open + note add + close, 1x"].median,
                TARGET,
                "one CLI command's store work, without the interpreter's start",
                informational=True,
            ),
        ]
        print_verdicts("bench_checkpoint", verdicts)
        if args.profile:
            profile(adder(stores["100x"]).fn)
        for store in stores.values():
            store.close()
    finish(verdicts, args, started)


if __name__ == "__main__":
    main()
