"""Target 3 — opening a person and reading the first page barely depends on journal length.

Two stores, one person each, with a mixed journal (about 60 % note_added, 20 % restated,
10 % scope_changed, 10 % deleted) of 10,000 and 1,000,000 events (--quick: 1,000 and
100,000), built with journal.append in batches of 5,000 events per transaction.

Measured, cold each time (the store is closed and reopened; the OS file cache stays warm):
Store.open + PersonSession.open + control.notes.page(session, NoteFilter(), offset=0,
limit=50) + control.notes.texts_of(session, notes).

Baseline: the same on the 10,000-event store, in the same run (interleaved).
Target: t(big) / t(small) <= 1.5 (medians).

Building 1,000,000 events takes a while (see README.md); --build-budget SECONDS stops the
big build early and measures at the size reached, --events N picks another size, and
--dir DIR keeps the built stores there so later runs reuse them.

Run: .venv/bin/python tests/perf/bench_open_page.py [--quick] [--events N]
     [--build-budget S] [--dir DIR] [--repeat N] [--profile]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

from _bench import (
    Built,
    JournalMaker,
    Timing,
    Verdict,
    append_events,
    finish,
    fmt_time,
    header,
    new_store,
    open_store,
    parser,
    print_verdicts,
    profile,
    table,
    workdir,
)

from engram.control.notes import page, texts_of
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.notes import NoteFilter
from engram.runtime.conversations import start_conversation

TARGET = 1.5
PERSON = PersonId("alice")
PAGE = 50
STEPS = ("Store.open", "PersonSession.open", "notes.page", "notes.texts_of")


@dataclass
class Subject:
    """One built store and what its timed runs measured."""

    label: str
    path: Path
    events: int
    active: int = 0
    total: Timing | None = None
    steps: dict[str, Timing] | None = None


def build(folder: Path, name: str, events: int, budget: float | None) -> tuple[Path, int]:
    """Build (or reuse, if a previous run left it in --dir) a store with `events` events."""
    path = folder / f"{name}.engram"
    marker = folder / f"{name}.json"
    if marker.exists() and path.exists():
        data = json.loads(marker.read_text())
        print(f"   reusing {path} ({data['events']:,} events, built in {data['seconds']:.0f} s)")
        return path, int(data["events"])
    for leftover in folder.glob(f"{name}.engram*"):
        leftover.unlink()
    store = new_store(path)
    conversation = start_conversation(store, [PERSON]).id
    maker = JournalMaker(conversation, seed=len(name))
    built: Built = append_events(
        store, PERSON, maker, events - 1, budget=budget, progress=True, label=name
    )
    store.close()
    total = built.events + 1
    print(
        f"   built {name}: {total:,} events in {built.seconds:.1f} s "
        f"({built.rate:,.0f} events/s); "
        + ", ".join(f"{k.value} {v:,}" for k, v in maker.counts.items())
    )
    if total < events:
        print(f"   NOTE: build budget reached; {name} has {total:,} events, not {events:,}")
    marker.write_text(json.dumps({"events": total, "seconds": built.seconds}))
    return path, total


def pick(subject: Subject, step: str) -> Timing:
    """The timing of one step (or of the whole read, step "total")."""
    assert subject.total is not None and subject.steps is not None
    return subject.total if step == "total" else subject.steps[step]


def cold_read(subject: Subject) -> None:
    """One cold open of the person and their first page, with the text of its notes."""
    assert subject.total is not None and subject.steps is not None
    marks = [time.perf_counter()]
    store = open_store(subject.path)
    marks.append(time.perf_counter())
    session = PersonSession.open(store, PERSON)
    marks.append(time.perf_counter())
    total, notes = page(session, NoteFilter(), offset=0, limit=PAGE)
    marks.append(time.perf_counter())
    texts = texts_of(session, notes)
    marks.append(time.perf_counter())
    store.close()
    if len(notes) != min(PAGE, total) or any(t is None for t in texts.values()):
        raise AssertionError("the first page came back incomplete")
    subject.active = total
    subject.total.add(marks[-1] - marks[0])
    for index, step in enumerate(STEPS):
        subject.steps[step].add(marks[index + 1] - marks[index])


def main() -> None:
    started = time.perf_counter()
    p = parser(__doc__ or "")
    p.add_argument("--events", type=int, default=None, help="events in the big journal")
    p.add_argument(
        "--build-budget",
        type=float,
        default=None,
        help="stop building the big journal after this many seconds",
    )
    args = p.parse_args()
    small = 1_000 if args.quick else 10_000
    big = args.events or (100_000 if args.quick else 1_000_000)
    repeat = args.repeat or (5 if args.quick else 15)
    header(f"bench_open_page: open + first page, {small:,} vs {big:,} events", args)
    with workdir(args) as folder:
        run(folder, args, small, big, repeat, started)


def run(
    folder: Path, args: argparse.Namespace, small: int, big: int, repeat: int, started: float
) -> None:
    build_start = time.perf_counter()
    small_path, small_events = build(folder, f"open-page-{small}", small, None)
    big_path, big_events = build(folder, f"open-page-{big}", big, args.build_budget)
    print(f"   stores ready after {time.perf_counter() - build_start:.0f} s")
    subjects = [
        Subject(f"{small_events:,} events", small_path, small_events),
        Subject(f"{big_events:,} events", big_path, big_events),
    ]
    for subject in subjects:
        subject.total = Timing()
        subject.steps = {step: Timing() for step in STEPS}
        cold_read(subject)  # warm-up (also fills the OS file cache)
        subject.total = Timing()
        subject.steps = {step: Timing() for step in STEPS}
    for _ in range(repeat):
        for subject in subjects:
            cold_read(subject)

    rows: list[list[str]] = []
    for step in (*STEPS, "total"):
        small_t, big_t = (pick(subject, step) for subject in subjects)
        rows.append(
            [
                step,
                fmt_time(small_t.median),
                fmt_time(small_t.best),
                fmt_time(big_t.median),
                fmt_time(big_t.best),
                f"{big_t.median / small_t.median:.2f}x",
            ]
        )
    rows.append(
        [
            "active notes (page total)",
            f"{subjects[0].active:,}",
            "",
            f"{subjects[1].active:,}",
            "",
            "",
        ]
    )
    heads = ["step (median / best)"]
    for subject in subjects:
        heads += [f"{subject.label} med", "best"]
    heads.append("ratio")
    print()
    print(table(heads, rows))
    print(f"   {repeat} cold runs per store (+1 warm-up), interleaved")
    if big_events < big:
        print(f"   NOTE: the big store holds {big_events:,} events, not the {big:,} asked for")

    small_total, big_total = (s.total for s in subjects)
    assert small_total is not None and big_total is not None
    verdicts = [
        Verdict(
            f"t({big_events:,}) / t({small_events:,}) (median)",
            big_total.median,
            small_total.median,
            TARGET,
            "open + session + first page of 50 + their texts, cold; baseline = same on the "
            "small store",
        )
    ]
    print_verdicts("bench_open_page", verdicts)
    if args.profile:
        profiled = subjects[1]
        profiled.total = Timing()
        profiled.steps = {step: Timing() for step in STEPS}
        profile(lambda: cold_read(profiled))
    finish(verdicts, args, started)


if __name__ == "__main__":
    main()
