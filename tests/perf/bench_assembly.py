"""Target 4 — turn assembly barely depends on how many notes a person has.

Two stores, one person (alice) each, with 1,000 and 100,000 active notes (--quick: 100 and
10,000), learned in alice's private conversation: ~10 % portable, the rest direct or
unspecified; ~10 % preferences, the rest facts; plus a language and a tone note and 7
digest lines. Each store also has a shared conversation (alice and bob).

Measured: runtime.context.assemble_turn(store, Attribution(alice, conversation)) on an open
store (a running runtime), for
  - the private conversation (subject alone: every scope is eligible) — the target;
  - the shared conversation (only the ~10 % portable notes are eligible, found by the
    ix_note_scope_rank index, not by reading past private ones) — issue 19 item 4.

Baseline: the same call on the small store, in the same run (interleaved).
Target: t(big) / t(small) <= 3 (medians), private and shared conversations alike.

Run: .venv/bin/python tests/perf/bench_assembly.py [--quick] [--repeat N] [--profile]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from _bench import (
    JournalMaker,
    Mix,
    Timing,
    Verdict,
    append_events,
    finish,
    fmt_time,
    header,
    measure,
    new_store,
    parser,
    print_verdicts,
    profile,
    table,
    workdir,
)

from engram.engine.assembly import AssembledBlock
from engram.model.event_bodies import DigestLineAdded
from engram.model.events import Cause, EventType, NewEvent
from engram.model.ids import ConversationId, PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.context import Attribution, assemble_turn, audience_for_turn, read_scoped
from engram.runtime.conversations import start_conversation
from engram.runtime.note_writes import NoteDraft, note_added
from engram.store import journal
from engram.store.store import Store

TARGET = 3.0
ALICE = PersonId("alice")
BOB = PersonId("bob")
CASES = ("private", "shared")


@dataclass
class Subject:
    """One store and its measurements."""

    notes: int
    store: Store
    conversations: dict[str, ConversationId]
    turn: dict[str, Timing] = field(default_factory=dict)
    read: dict[str, Timing] = field(default_factory=dict)
    block: dict[str, AssembledBlock] = field(default_factory=dict)
    eligible: dict[str, int] = field(default_factory=dict)


def build(folder: Path, notes: int) -> Subject:
    store = new_store(folder / f"assembly-{notes}.engram")
    private = start_conversation(store, [ALICE]).id
    shared = start_conversation(store, [ALICE, BOB]).id
    cause = Cause(private, None)
    extras: list[NewEvent] = [
        note_added(
            NoteDraft("English, British spelling.", Kind.STYLE, Scope.PORTABLE, topic="language"),
            "extractor",
            cause,
            private,
        ),
        note_added(
            NoteDraft("Friendly and brief.", Kind.STYLE, Scope.PORTABLE, topic="tone"),
            "extractor",
            cause,
            private,
        ),
    ]
    extras += [
        NewEvent(
            EventType.DIGEST_LINE_ADDED,
            "runtime",
            DigestLineAdded(private),
            cause,
            f"Talked about the allotment plan, part {i + 1}.",
            private,
        )
        for i in range(7)
    ]
    with store.write() as txn:
        journal.append(store, txn, ALICE, extras)
    maker = JournalMaker(
        private,
        seed=notes,
        mix=Mix(added=1, restated=0, scope_changed=0, deleted=0),
        portable_share=0.10,
    )
    built = append_events(store, ALICE, maker, notes - 2)
    print(
        f"   built {notes:,} notes in {built.seconds:.1f} s ({built.rate:,.0f} events/s)",
        flush=True,
    )
    return Subject(notes, store, {"private": private, "shared": shared})


def main() -> None:
    started = time.perf_counter()
    args = parser(__doc__ or "").parse_args()
    small, big = (100, 10_000) if args.quick else (1_000, 100_000)
    repeat = args.repeat or (10 if args.quick else 30)
    header(f"bench_assembly: assemble_turn with {small:,} vs {big:,} notes", args)
    with workdir(args) as folder:
        run(folder, args, small, big, repeat, started)


def run(
    folder: Path, args: argparse.Namespace, small: int, big: int, repeat: int, started: float
) -> None:
    subjects = [build(folder, small), build(folder, big)]
    for subject in subjects:
        for case in CASES:
            attribution = Attribution(ALICE, subject.conversations[case])
            subject.block[case] = assemble_turn(subject.store, attribution)  # warm-up
            audience = audience_for_turn(subject.store, attribution)
            subject.eligible[case] = len(read_scoped(subject.store, ALICE, audience).notes)
            subject.turn[case] = Timing()
            subject.read[case] = Timing()
    for _ in range(repeat):
        for case in CASES:
            for subject in subjects:
                attribution = Attribution(ALICE, subject.conversations[case])
                subject.turn[case].samples += measure(
                    partial(assemble_turn, subject.store, attribution),
                    repeat=1,
                    warmup=0,
                ).samples
                audience = audience_for_turn(subject.store, attribution)
                subject.read[case].samples += measure(
                    partial(read_scoped, subject.store, ALICE, audience),
                    repeat=1,
                    warmup=0,
                ).samples

    small_s, big_s = subjects
    rows: list[list[str]] = []
    for case in CASES:
        for what, pick in (("assemble_turn", "turn"), ("  of which read_scoped", "read")):
            a: Timing = getattr(small_s, pick)[case]
            b: Timing = getattr(big_s, pick)[case]
            rows.append(
                [
                    f"{case}: {what}",
                    fmt_time(a.median),
                    fmt_time(a.best),
                    fmt_time(b.median),
                    fmt_time(b.best),
                    f"{b.median / a.median:.2f}x",
                ]
            )
        rows.append(
            [
                f"{case}: candidates read / notes placed / block chars",
                f"{small_s.eligible[case]} / {len(small_s.block[case].placed)} / "
                f"{small_s.block[case].used}",
                "",
                f"{big_s.eligible[case]} / {len(big_s.block[case].placed)} / "
                f"{big_s.block[case].used}",
                "",
                "",
            ]
        )
    print()
    print(
        table(
            [
                "per turn",
                f"{small:,} notes med",
                "best",
                f"{big:,} notes med",
                "best",
                "ratio",
            ],
            rows,
        )
    )
    print(f"   {repeat} turns per case and store (+1 warm-up), interleaved; store kept open")

    verdicts = [
        Verdict(
            f"private: t({big:,}) / t({small:,}) (median)",
            big_s.turn["private"].median,
            small_s.turn["private"].median,
            TARGET,
            "assemble_turn, subject-alone conversation; baseline = the small store",
        ),
        Verdict(
            f"shared: t({big:,}) / t({small:,}) (median)",
            big_s.turn["shared"].median,
            small_s.turn["shared"].median,
            TARGET,
            "assemble_turn, two-participant conversation (~10 % of notes portable)",
        ),
    ]
    print_verdicts("bench_assembly", verdicts)
    if args.profile:
        for case in CASES:
            attribution = Attribution(ALICE, big_s.conversations[case])
            print(f"\n-- profile: {case} conversation, {big:,} notes")
            profile(partial(assemble_turn, big_s.store, attribution), top=15)
    for subject in subjects:
        subject.store.close()
    finish(verdicts, args, started)


if __name__ == "__main__":
    main()
