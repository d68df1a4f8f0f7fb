"""Cost growth: each path's cost at 10x and 100x its base scale, drawn (issue 19 item 7).

Each path is measured at 1x, 10x and 100x of a base size, in one run, its three sizes
interleaved round after round; the ratio at a scale is its cost there over its cost at 1x
(medians). What "cost" is depends on the path: per event where the work is per event
(append, verify — flat is ideal), per call where a call should not depend on size (opening
a person with its first page, assembling a turn — flat is ideal) and per query for the
searches, which read more as the corpus grows; beside those, the same growth of an outside
peer measured in the same run (SQLite FTS5 BM25 over the same texts; the raw read +
BLAKE2b floor of verify), so the line to compare a search with is its peer's, not 1.

| path | base (1x) | cost | peer |
|---|---|---|---|
| append | journal of 2,000 events | per event, batches of 1,000 | — |
| verify | 2,000 events | per event | raw read + BLAKE2b (bench_verify's floor) |
| open + first page | 2,000 events | per call, cold | — |
| assembly, private / shared | 1,000 notes | per turn | — |
| conversation_find | 100 turns | per question | FTS5 BM25 |
| person-wide search | 2,000 messages | per question | FTS5 BM25 |

--quick divides every base by 10 (a smoke run). Writes docs/cost-growth.json (the ratios)
and docs/cost-growth.png (the chart), or where --out-json / --out-png say.

Run: .venv/bin/python tests/perf/cost_growth.py [--quick] [--repeat N] [--dir DIR]
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from _bench import (
    JournalMaker,
    append_events,
    fmt_time,
    header,
    measure,
    new_store,
    open_store,
    parser,
    table,
    workdir,
)
from bench_assembly import build as assembly_store
from bench_history import (
    LOCOMO,
    build_fts,
    build_index,
    conversation_store,
    cycled,
    fts_conversation,
    fts_find,
    fts_person,
    locomo,
    person_messages,
)
from bench_verify import raw_checks
from sqlalchemy import text as sa_text

from engram.control.notes import page, texts_of
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.notes import NoteFilter
from engram.runtime import history
from engram.runtime.context import Attribution, assemble_turn
from engram.runtime.conversations import start_conversation
from engram.store import chain, journal, pseudonyms
from engram.store.verify import verify

SCALES = (1, 10, 100)
ALICE = PersonId("alice")
ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = 20


@dataclass
class Path_:
    """One path's cost at each scale (seconds per unit), and its peer's."""

    name: str
    unit: str
    cost: dict[int, list[float]] = field(default_factory=dict)
    peer: str | None = None
    peer_cost: dict[int, list[float]] = field(default_factory=dict)

    def add(self, scale: int, seconds: float, peer: float | None = None) -> None:
        self.cost.setdefault(scale, []).append(seconds)
        if peer is not None:
            self.peer_cost.setdefault(scale, []).append(peer)

    def ratio(self, scale: int, peer: bool = False) -> float:
        costs = self.peer_cost if peer else self.cost
        return statistics.median(costs[scale]) / statistics.median(costs[1])


def timed(fn: Callable[[], object]) -> float:
    return measure(fn, repeat=1, warmup=0).best


# ---- journal paths: append, verify, open + first page ------------------------------------


def journal_paths(folder: Path, base: int, repeat: int) -> list[Path_]:
    stores = {}
    for scale in SCALES:
        path = folder / f"growth-journal-{scale}x.engram"
        store = new_store(path)
        conversation = start_conversation(store, [ALICE]).id
        maker = JournalMaker(conversation, seed=scale)
        built = append_events(store, ALICE, maker, base * scale - 1, batch=1_000)
        print(f"   journal {scale}x: {base * scale:,} events in {built.seconds:.1f} s", flush=True)
        store_id, verify_key = store.info.id, store.info.verify_key
        with store.read() as conn:
            actors = conn.execute(sa_text("SELECT DISTINCT actor FROM journal")).scalars().all()
        aliases = {actor: pseudonyms.pseudonym(store, actor) for actor in actors}
        hidden = store.hidden_name(chain.journal_chain(ALICE))
        store.close()
        stores[scale] = (path, maker, (store_id, verify_key, aliases, hidden))
    appended = Path_("append", "per event")
    verified = Path_("verify", "per event", peer="raw read + BLAKE2b")
    opened = Path_("open + first page", "per call")
    sizes = {scale: base * scale for scale in SCALES}
    for _ in range(repeat):
        for scale in SCALES:
            path, maker, (store_id, verify_key, aliases, hidden) = stores[scale]
            events = sizes[scale]
            store = open_store(path)
            try:
                took = timed(partial(verify, store))
                raw = timed(partial(raw_checks, path, store_id, verify_key, aliases, hidden))
                verified.add(scale, took / events, raw / events)
                batch = maker.batch(1_000)

                def append(store=store, batch=batch) -> None:  # type: ignore[no-untyped-def]
                    with store.write() as txn:
                        journal.append(store, txn, ALICE, batch)

                appended.add(scale, timed(append) / 1_000)
                sizes[scale] += 1_000
            finally:
                store.close()
            began = time.perf_counter()
            store = open_store(path)
            session = PersonSession.open(store, ALICE)
            _, notes = page(session, NoteFilter(), offset=0, limit=50)
            texts_of(session, notes)
            store.close()
            opened.add(scale, time.perf_counter() - began)
    return [appended, verified, opened]


# ---- assembly --------------------------------------------------------------------------


def assembly_paths(folder: Path, base: int, repeat: int) -> list[Path_]:
    subjects = {scale: assembly_store(folder, base * scale) for scale in SCALES}
    out = {case: Path_(f"assembly, {case}", "per turn") for case in ("private", "shared")}
    for subject in subjects.values():
        for case in out:
            assemble_turn(subject.store, Attribution(ALICE, subject.conversations[case]))
    for _ in range(repeat * 3):
        for scale, subject in subjects.items():
            for case, growth in out.items():
                attribution = Attribution(ALICE, subject.conversations[case])
                growth.add(scale, timed(lambda a=attribution, s=subject: assemble_turn(s.store, a)))
    for subject in subjects.values():
        subject.store.close()
    return list(out.values())


# ---- searches ---------------------------------------------------------------------------


def search_paths(folder: Path, base_turns: int, base_messages: int, repeat: int) -> list[Path_]:
    corpus, questions = locomo(LOCOMO)
    rng = random.Random(5)
    asked = rng.sample(questions, QUESTIONS)
    find = Path_("conversation_find", "per question", peer="FTS5 BM25")
    person = Path_("person-wide search", "per question", peer="FTS5 BM25")
    talks = {}
    people = {}
    for scale in SCALES:
        texts = cycled(corpus, base_turns * scale, random.Random(scale))
        store, conversation = conversation_store(folder, texts)
        history.find(store, conversation, asked[0], "relevance", 5)  # warm: index built
        talks[scale] = (store, conversation, fts_conversation(texts))
        rows = person_messages(cycled(corpus, base_messages * scale, random.Random(scale + 9)))
        people[scale] = (build_index(rows), build_fts(rows))
        print(f"   searches {scale}x: {len(texts):,} turns, {len(rows):,} messages", flush=True)
    for _ in range(repeat):
        for question in asked:
            for scale in SCALES:
                store, conversation, db = talks[scale]
                find.add(
                    scale,
                    timed(partial(history.find, store, conversation, question, "relevance", 5)),
                    timed(partial(fts_find, db, question)),
                )
                index, fts = people[scale]
                person.add(
                    scale,
                    timed(partial(index.search, question, 25)),
                    timed(partial(fts_person, fts, question)),
                )
    for store, _, db in talks.values():
        store.close()
        db.close()
    return [find, person]


# ---- report -----------------------------------------------------------------------------


def rows_of(paths: list[Path_]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for p in paths:
        row: dict[str, object] = {
            "name": p.name,
            "unit": p.unit,
            "cost_1x_s": statistics.median(p.cost[1]),
            "ratio_10x": round(p.ratio(10), 3),
            "ratio_100x": round(p.ratio(100), 3),
        }
        if p.peer:
            row |= {
                "peer": p.peer,
                "peer_ratio_10x": round(p.ratio(10, peer=True), 3),
                "peer_ratio_100x": round(p.ratio(100, peer=True), 3),
            }
        out.append(row)
    return out


def chart(rows: list[dict[str, object]], out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(9, 5.5), dpi=110)
    xs = list(SCALES)
    axes.plot(xs, [1, 1, 1], color="0.75", linewidth=1, label="flat (ideal for per-unit costs)")
    axes.plot(xs, xs, color="0.85", linewidth=1, linestyle=":", label="linear in size")
    for index, row in enumerate(rows):
        colour = f"C{index}"
        ys = [1.0, float(row["ratio_10x"]), float(row["ratio_100x"])]  # type: ignore[arg-type]
        axes.plot(xs, ys, marker="o", color=colour, label=f"{row['name']} ({row['unit']})")
        if "peer" in row:
            peer = [1.0, float(row["peer_ratio_10x"]), float(row["peer_ratio_100x"])]  # type: ignore[arg-type]
            axes.plot(
                xs,
                peer,
                marker="x",
                linestyle="--",
                color=colour,
                label=f"  peer: {row['peer']}",
            )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xticks(xs, ["1x", "10x", "100x"])
    axes.set_xlabel("scale (size of the store, journal, conversation or corpus)")
    axes.set_ylabel("cost / cost at 1x (medians)")
    axes.set_title(title, fontsize=10)
    axes.grid(True, which="both", color="0.93")
    axes.legend(fontsize=7, loc="upper left", frameon=False)
    figure.tight_layout()
    figure.savefig(out)
    plt.close(figure)


def main() -> None:
    started = time.perf_counter()
    p = parser(__doc__ or "")
    p.add_argument("--out-json", type=Path, default=None)
    p.add_argument("--out-png", type=Path, default=None)
    args = p.parse_args()
    header("cost growth at 10x and 100x", args)
    shrink = 10 if args.quick else 1
    repeat = args.repeat or 3
    with workdir(args) as folder:
        paths = journal_paths(folder, 2_000 // shrink, repeat)
        paths += assembly_paths(folder, 1_000 // shrink, repeat)
        paths += search_paths(folder, max(10, 100 // shrink), 2_000 // shrink, repeat)
    rows = rows_of(paths)
    print()
    print(
        table(
            ["path", "cost", "at 1x", "10x", "100x", "peer 10x", "peer 100x"],
            [
                [
                    str(r["name"]),
                    str(r["unit"]),
                    fmt_time(float(r["cost_1x_s"])),  # type: ignore[arg-type]
                    f"{r['ratio_10x']:.2f}x",
                    f"{r['ratio_100x']:.2f}x",
                    f"{r['peer_ratio_10x']:.2f}x" if "peer" in r else "",
                    f"{r['peer_ratio_100x']:.2f}x" if "peer" in r else "",
                ]
                for r in rows
            ],
        )
    )
    docs = ROOT / "docs"
    suffix = "-quick" if args.quick else ""
    out_json = args.out_json or docs / f"cost-growth{suffix}.json"
    out_png = args.out_png or docs / f"cost-growth{suffix}.png"
    when = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    machine = (
        f"{platform.machine()}, {platform.python_version()}, {__import__('os').cpu_count()} cpu(s)"
    )
    out_json.write_text(
        json.dumps({"measured": when, "machine": machine, "rows": rows}, indent=2) + "\n"
    )
    chart(rows, out_png, f"Cost growth, measured {when[:10]} on {machine}")
    print(
        f"\n   wrote {out_json} and {out_png}; total runtime {time.perf_counter() - started:.1f} s"
    )
    if args.json is not None:
        args.json.write_text(json.dumps([], indent=2) + "\n")


if __name__ == "__main__":
    main()
