"""Shared helpers for the benchmarks in tests/perf (not collected by pytest).

Each benchmark is a plain script: it builds throwaway stores in a temporary folder (fast
Argon2, no keyring), times the operation and an in-run baseline with time.perf_counter,
and prints a table with the ratio, the target and PASS/MISS.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engram.model.event_bodies import Deleted, NoteAdded, Restated, ScopeChanged, body_as
from engram.model.events import Cause, EventType, NewEvent
from engram.model.ids import ConversationId, NoteId, PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.note_writes import NoteDraft, note_added
from engram.store import crypto, journal
from engram.store.store import Store

PASSPHRASE = "x"
# LoCoMo (read-only), beside the project: ../shared/data relative to the project root
LOCOMO = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "locomo10.json"
).resolve()

# ---- timing ---------------------------------------------------------------------------


@dataclass
class Timing:
    """Wall-clock samples of one measured thing, in seconds (each divided by `per`)."""

    samples: list[float] = field(default_factory=list)

    @property
    def best(self) -> float:
        return min(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def add(self, seconds: float) -> None:
        self.samples.append(seconds)


def measure(
    fn: Callable[[], object],
    *,
    repeat: int,
    per: int = 1,
    setup: Callable[[], object] | None = None,
    warmup: int = 1,
) -> Timing:
    """Run `fn` `warmup + repeat` times (setup untimed before each); samples are seconds/per."""
    timing = Timing()
    for index in range(warmup + repeat):
        if setup is not None:
            setup()
        gc.collect()
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        if index >= warmup:
            timing.add(elapsed / per)
    return timing


@dataclass(frozen=True)
class Task:
    """One thing to time in `interleaved`: seconds are divided by `per`; setup is untimed."""

    fn: Callable[[], object]
    per: int = 1
    setup: Callable[[], object] | None = None


def interleaved(tasks: Mapping[str, Task], *, repeat: int, warmup: int = 1) -> dict[str, Timing]:
    """Time every task once per round, round after round, so that a busy moment on the
    machine hits the measured operation and its baseline alike."""
    timings = {name: Timing() for name in tasks}
    for round_ in range(warmup + repeat):
        for name, task in tasks.items():
            if task.setup is not None:
                task.setup()
            gc.collect()
            start = time.perf_counter()
            task.fn()
            elapsed = time.perf_counter() - start
            if round_ >= warmup:
                timings[name].add(elapsed / task.per)
    return timings


@contextmanager
def stopwatch() -> Iterator[list[float]]:
    """`with stopwatch() as t: ...` then t[0] is the elapsed seconds."""
    box: list[float] = []
    start = time.perf_counter()
    try:
        yield box
    finally:
        box.append(time.perf_counter() - start)


# ---- formatting -----------------------------------------------------------------------


def fmt_time(seconds: float) -> str:
    """A duration with a sensible unit."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table; the first column is left-aligned, the rest right-aligned."""
    widths = [len(h) for h in headers]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
            for i, cell in enumerate(cells)
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


@dataclass(frozen=True)
class Verdict:
    """One target: measured / baseline <= target (informational ones do not fail --strict)."""

    name: str
    measured: float
    baseline: float
    target: float
    how: str
    informational: bool = False
    unit: str = "s"  # what measured and baseline are: seconds, or e.g. "MiB"

    def shown(self, value: float) -> str:
        return fmt_time(value) if self.unit == "s" else f"{value:,.1f} {self.unit}"

    @property
    def ratio(self) -> float:
        return self.measured / self.baseline

    @property
    def ok(self) -> bool:
        return self.ratio <= self.target


def print_verdicts(title: str, verdicts: Sequence[Verdict]) -> None:
    """The summary table every benchmark ends with."""
    print()
    print(f"== {title}: result")
    rows = [
        [
            v.name,
            v.shown(v.measured),
            v.shown(v.baseline),
            f"{v.ratio:.2f}x",
            f"<= {v.target:g}x",
            ("PASS" if v.ok else "MISS") + (" (info)" if v.informational else ""),
        ]
        for v in verdicts
    ]
    print(table(["target", "measured", "baseline", "ratio", "target", "verdict"], rows))
    for v in verdicts:
        print(f"   {v.name}: {v.how}")


def header(title: str, args: argparse.Namespace) -> None:
    """What ran, where, and at which scale."""
    print(f"== {title}")
    print(
        f"   python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} cpu(s); scale={'quick (1/10)' if args.quick else 'full'}"
    )


def parser(description: str) -> argparse.ArgumentParser:
    """Common flags: --quick (10x smaller), --repeat, --strict (exit 1 on MISS)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="sizes scaled down 10x (smoke run)")
    p.add_argument("--repeat", type=int, default=None, help="timed repetitions per measurement")
    p.add_argument("--strict", action="store_true", help="exit with status 1 if a target is missed")
    p.add_argument(
        "--dir", type=Path, default=None, help="where to build stores (default: a temp dir)"
    )
    p.add_argument(
        "--profile", action="store_true", help="also run the measured operation under cProfile"
    )
    p.add_argument(
        "--postgres",
        action="store_true",
        help="keep the measured stores in a throwaway PostgreSQL cluster (issue 19 item 8)",
    )
    p.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the verdicts to FILE as JSON (run_all.py collects them)",
    )
    return p


def verdict_rows(verdicts: Sequence[Verdict], bench: str, quick: bool) -> list[dict[str, object]]:
    """The verdicts as docs/perf.json rows: name, ratio, target, pass, and how."""
    return [
        {
            "name": v.name,
            "bench": bench,
            "ratio": round(v.ratio, 4),
            "target": v.target,
            "pass": v.ok,
            "measured": v.measured,
            "baseline": v.baseline,
            "informational": v.informational,
            "unit": v.unit,
            "scale": "quick" if quick else "full",
            "how": v.how,
        }
        for v in verdicts
    ]


def finish(verdicts: Sequence[Verdict], args: argparse.Namespace, started: float) -> None:
    """Total runtime, the verdicts as JSON under --json, and the exit status under
    --strict."""
    print(f"\n   total runtime {time.perf_counter() - started:.1f} s")
    if getattr(args, "json", None) is not None:
        bench = Path(sys.argv[0]).stem
        if getattr(args, "postgres", False):
            bench += " (PostgreSQL)"
            verdicts = [replace(v, name=f"PostgreSQL: {v.name}") for v in verdicts]
        rows = verdict_rows(verdicts, bench, bool(getattr(args, "quick", False)))
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    if args.strict and not all(v.ok for v in verdicts if not v.informational):
        sys.exit(1)


@contextmanager
def workdir(args: argparse.Namespace) -> Iterator[Path]:
    """A scratch folder for stores, removed afterwards unless --dir was given."""
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        yield args.dir
        return
    path = Path(tempfile.mkdtemp(prefix="engram-bench-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# ---- stores ---------------------------------------------------------------------------


class Backend:
    """Where a benchmark's stores live: files in its scratch folder (SQLite, the default)
    or, under --postgres, databases in a throwaway PostgreSQL cluster started for the run
    on a loopback port (tests/postgres_cluster.py; packaging/bootstrap.sh installs the
    server). Sizes, workloads and baselines stay the same."""

    def __init__(self, folder: Path, cluster: Any = None) -> None:
        self.folder = folder
        self.cluster = cluster

    @property
    def postgres(self) -> bool:
        return self.cluster is not None

    @property
    def name(self) -> str:
        return "PostgreSQL" if self.postgres else f"SQLite {sqlite3.sqlite_version}"

    def location(self, stem: str) -> str:
        """A new, empty place for one store: a file, or a fresh database."""
        if self.cluster is None:
            return str(self.folder / f"{stem}.engram")
        return str(self.cluster.create_database("bench_" + stem.replace("-", "_")))


@contextmanager
def backend(args: argparse.Namespace, folder: Path) -> Iterator[Backend]:
    """The backend --postgres asks for; its cluster is removed afterwards."""
    if not getattr(args, "postgres", False):
        yield Backend(folder)
        return
    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)
    from tests.postgres_cluster import running_cluster

    with running_cluster(durable=True) as cluster:
        print(f"   stores in PostgreSQL on 127.0.0.1:{cluster.port} (fsync on)", flush=True)
        yield Backend(folder, cluster)


def new_store(path: Path | str) -> Store:
    """A throwaway store: fast Argon2, passphrase only."""
    return Store.create(
        str(path), passphrase=PASSPHRASE, use_keyring=False, kdf=crypto.FAST_KDF_FOR_TESTS
    )


def open_store(path: Path | str) -> Store:
    """Open a throwaway store the way a reviewer would (passphrase)."""
    return Store.open(str(path), passphrase=PASSPHRASE)


# ---- journals -------------------------------------------------------------------------

_SENTENCE = (
    "prefers tea over coffee in the morning and likes short answers with a concrete example "
    "when learning something new about gardening cooking music travel or their work on the "
    "allotment project with the neighbours every other weekend unless it rains"
)
_WORDS = _SENTENCE.split()


def note_text(rng: random.Random, length: int = 80) -> str:
    """A plausible ~80-character note text."""
    words: list[str] = []
    size = 0
    while size < length:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    text = " ".join(words)[:length].rstrip()
    return text[0].upper() + text[1:] + "."


@dataclass
class Mix:
    """Relative weights of the event types a mixed journal is made of."""

    added: int = 6
    restated: int = 2
    scope_changed: int = 1
    deleted: int = 1

    def pattern(self) -> list[EventType]:
        return (
            [EventType.NOTE_ADDED] * self.added
            + [EventType.RESTATED] * self.restated
            + [EventType.SCOPE_CHANGED] * self.scope_changed
            + [EventType.DELETED] * self.deleted
        )


class JournalMaker:
    """Makes valid NewEvents for one person: note_added, restated, scope_changed, deleted.

    Targets of restated/scope_changed/deleted are open notes picked at random from the
    most recent `window` notes (so a journal of any length can be built at an even rate;
    the projection still reads each target that is not in the current batch).
    """

    def __init__(
        self,
        conversation: ConversationId,
        *,
        seed: int = 1,
        mix: Mix | None = None,
        portable_share: float = 0.33,
        preference_share: float = 0.1,
        window: int = 2_000,
    ) -> None:
        self.conversation = conversation
        self.rng = random.Random(seed)
        self.pattern = (mix or Mix()).pattern()
        self.portable_share = portable_share
        self.preference_share = preference_share
        self.window = window
        self.open: list[NoteId] = []  # open notes, newest last
        self.scopes: dict[NoteId, Scope] = {}
        self.counts: dict[EventType, int] = dict.fromkeys(self.pattern, 0)
        self.texts = 0

    def _scope(self) -> Scope:
        r = self.rng.random()
        if r < self.portable_share:
            return Scope.PORTABLE
        return Scope.DIRECT if r < (1 + self.portable_share) / 2 else Scope.UNSPECIFIED

    def _target(self) -> tuple[int, NoteId]:
        low = max(0, len(self.open) - self.window)
        index = self.rng.randrange(low, len(self.open))
        return index, self.open[index]

    def added(self) -> NewEvent:
        rng = self.rng
        kind = Kind.PREFERENCE if rng.random() < self.preference_share else Kind.FACT
        draft = NoteDraft(
            text=note_text(rng),
            kind=kind,
            scope=self._scope(),
            confidence_bp=rng.randrange(3_000, 9_001, 100),
        )
        source = Cause(self.conversation, None)
        event = note_added(draft, "extractor", source, self.conversation)
        note = body_as(event.body, NoteAdded).note
        self.open.append(note)
        self.scopes[note] = draft.scope
        self.counts[EventType.NOTE_ADDED] += 1
        self.texts += 1
        return event

    def event(self) -> NewEvent:
        kind = self.rng.choice(self.pattern)
        if kind is EventType.NOTE_ADDED or len(self.open) < 2:
            return self.added()
        index, note = self._target()
        self.counts[kind] += 1
        if kind is EventType.RESTATED:
            cause = Cause(self.conversation, None)
            return NewEvent(kind, "extractor", Restated(note, cause), cause)
        if kind is EventType.SCOPE_CHANGED:
            scope = Scope.PORTABLE if self.scopes[note] is not Scope.PORTABLE else Scope.DIRECT
            self.scopes[note] = scope
            return NewEvent(kind, "alice", ScopeChanged(note, scope))
        # deleted: the note closes; swap-remove it from the open list
        self.open[index] = self.open[-1]
        self.open.pop()
        del self.scopes[note]
        return NewEvent(kind, "alice", Deleted(note))

    def batch(self, size: int) -> list[NewEvent]:
        return [self.event() for _ in range(size)]


@dataclass(frozen=True)
class Built:
    """How a journal build went."""

    events: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


def append_events(
    store: Store,
    person: PersonId,
    maker: JournalMaker,
    total: int,
    *,
    batch: int = 5_000,
    budget: float | None = None,
    progress: bool = False,
    label: str = "",
) -> Built:
    """Append `total` events with journal.append, `batch` per transaction.

    With `budget` (seconds), stop after the batch that crosses it.
    """
    start = time.perf_counter()
    done = 0
    last_report = start
    while done < total:
        size = min(batch, total - done)
        events = maker.batch(size)
        with store.write() as txn:
            journal.append(store, txn, person, events)
        done += size
        now = time.perf_counter()
        over = budget is not None and now - start > budget
        if progress and (now - last_report > 30 or done == total or over):
            last_report = now
            print(
                f"   building {label}: {done:,}/{total:,} events, "
                f"{done / (now - start):,.0f} events/s, {now - start:.0f} s",
                flush=True,
            )
        if over:
            break
    return Built(done, time.perf_counter() - start)


# ---- profiling ------------------------------------------------------------------------


def profile(fn: Callable[[], object], *, top: int = 25) -> None:
    """Run `fn` once under cProfile; print the top functions by own and cumulative time."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    fn()
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.strip_dirs()
    print(f"\n== cProfile: top {top} by cumulative time")
    stats.sort_stats("cumulative").print_stats(top)
    print(f"== cProfile: top {top} by own time")
    stats.sort_stats("tottime").print_stats(top)
