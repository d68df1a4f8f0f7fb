"""The inspector on a big store: first paint and scrolled pages must not grow with the
store, and the UI thread must never be blocked for long.

Targets (issue 3): t(100k notes) / t(1k notes) <= 1.5 for the first paint of the notes
table and for each scrolled page; the longest gap of a 10 ms heartbeat timer on the UI
thread while the inspector is used stays under 50 ms in every phase (issue 17 item 8):
open a person, filter, scroll, select, a typed text search, time travel, verify running
while the person scrolls (cancelled after VERIFY_SCROLL_S if still running), and the
access report. Every sample of every phase is printed. The one-time first show of a new
window (Qt laying out and painting every widget) is reported beside it.
Baseline in the same run: the same steps on a 1k-note store.

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python tests/perf/bench_inspector.py [--quick]
     [--rounds N] [--collector session|jobs|off] (when full collections are held off, to
     see what it saves) [--no-report] [--stores DIR] (keep the built stores for reruns)
     BENCH_STACKS=1 prints what the UI thread and the workers run whenever it is late.

The outside floor: the same heartbeat runs in a bare Qt window in a process of its own
(heartbeat.py, no Engram) for the whole run; each phase's longest block is printed beside
the floor's longest gap at the same moments, and the ratio. A plain QTableView scrolled the
same way (no Engram either) is the second reference: Qt's own painting on this machine.
"""

from __future__ import annotations

import argparse
import faulthandler
import gc
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from _bench import Verdict, verdict_rows
from heartbeat import Floor, Heartbeat
from PySide6.QtCore import QSettings, QSize
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QApplication, QTableView

from engram.control import forensics
from engram.gui.controller import InspectorController
from engram.gui.idle_lock import IdleLock
from engram.gui.main_window import MainWindow
from engram.gui.prompts import Prompts
from engram.gui.tasks import CollectorHold
from engram.model.events import NewEvent
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.note_writes import NoteDraft, note_added
from engram.store import crypto, journal
from engram.store.store import Store

PERSON = PersonId("pat")
BATCH = 5_000
SCOPES = list(Scope)
KINDS = list(Kind)
PHASES = (
    "open person again",
    "filter: all intervals",
    "scroll",
    "select notes",
    "typed text search",
    "time travel",
    "verify while scrolling",
    "access report",
)
VERIFY_SCROLL_S = 90.0  # how long the person scrolls while verify runs (then it is cancelled)
REPORT_LIMIT_S = 600.0


class BenchPrompts(Prompts):
    """The real dialog host, answering the save dialog with a path in the bench's folder
    and keeping what it would have shown."""

    def __init__(self, parent: MainWindow, folder: Path) -> None:
        super().__init__(parent)
        self.folder = folder
        self.shown: list[str] = []

    def save_path(self, suggested: str, caption: str) -> str | None:
        return str(self.folder / suggested)

    def inform(self, title: str, text: str) -> None:
        self.shown.append(title)

    def error(self, message: str) -> None:
        self.shown.append(f"error: {message}")


def note_batch(first: int, size: int) -> list[NewEvent]:
    """Notes `first` … `first + size - 1`, of every kind and scope, each with its number."""
    return [
        note_added(
            NoteDraft(
                f"note {n}: prefers item {n} over the others",
                KINDS[n % 4],
                SCOPES[n % 3],
                confidence_bp=n * 37 % 10_000,
            ),
            "bench",
            None,
            None,
        )
        for n in range(first, first + size)
    ]


def build(path: Path, notes: int) -> float:
    """A store with one person holding `notes` notes; returns seconds spent."""
    start = time.perf_counter()
    store = Store.create(
        str(path), passphrase="x", use_keyring=False, kdf=crypto.FAST_KDF_FOR_TESTS
    )
    with store.write() as txn:
        journal.ensure_person(store, txn, PERSON)
    made = 0
    while made < notes:
        size = min(BATCH, notes - made)
        with store.write() as txn:
            journal.append(store, txn, PERSON, note_batch(made, size))
        made += size
    store.close()
    return time.perf_counter() - start


class StackWatch:
    """With BENCH_STACKS set: a thread that, whenever the UI thread's heartbeat is late by
    more than 60 ms (or BENCH_STACKS=N ms), prints what the UI thread is running (and every
    worker), to find what blocks. It needs the GIL itself, so a block that holds it is seen
    as it ends.

    The stacks come from faulthandler, which reads them without making frame objects: a
    frame held by this thread would keep its locals (a QPainter in a paintEvent) alive past
    their return and destroy them here, off the UI thread (seen as a crash)."""

    def __init__(self, beat: Heartbeat) -> None:
        self.beat = beat
        self.ui = threading.get_ident()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        wanted = os.environ.get("BENCH_STACKS", "")
        self.late_ms = int(wanted) if wanted.isdigit() and int(wanted) > 1 else 60
        if wanted:
            self.thread.start()

    def _watch(self) -> None:
        seen = -1
        with tempfile.TemporaryFile("w+") as dump:
            while not self.stop.wait(0.02):
                late = self.beat.clock.elapsed() - self.beat.last
                if late > self.late_ms and self.beat.last != seen:
                    seen = self.beat.last
                    dump.seek(0)
                    dump.truncate()
                    faulthandler.dump_traceback(dump, all_threads=True)
                    dump.seek(0)
                    print(f"--- UI thread late {late} ms in {self.beat.phase}:")
                    for who, frames in _threads(dump.read(), self.ui):
                        if "_watch" not in frames[0]:
                            print(f"  [{who}] " + " < ".join(frames[:6]))


def _threads(dump: str, ui: int) -> list[tuple[str, list[str]]]:
    """faulthandler's dump as (thread, its frames innermost first as "file:line name")."""
    found: list[tuple[str, list[str]]] = []
    for part in dump.split("\n\n"):
        lines = part.strip().splitlines()
        if not lines or "hread 0x" not in lines[0]:
            continue
        ident = int(lines[0].split("0x")[1].split()[0], 16)
        frames = []
        for line in lines[1:]:
            match = re.match(r'\s*File "(.*)", line (\d+) in (.*)', line)
            if match:
                frames.append(f"{Path(match[1]).name}:{match[2]} {match[3]}")
        if frames:
            found.append(("UI" if ident == ui else f"thread {ident:x}", frames))
    return found


def wait(app: QApplication, done: callable, limit: float = 120.0) -> None:  # type: ignore[valid-type]
    deadline = time.perf_counter() + limit
    while not done():
        if time.perf_counter() > deadline:
            raise SystemExit("timed out")
        app.processEvents()
        time.sleep(0.001)


def measure(
    app: QApplication, path: Path, folder: Path, pages: int, floor: Floor
) -> dict[str, float]:
    """Open the store in a fresh window (first paint), then use it while a heartbeat watches
    the UI thread: open the person again, change a filter, scroll, select notes."""
    settings = QSettings(str(folder / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow()
    prompts = BenchPrompts(window, folder)
    controller = InspectorController(
        window, settings=settings, idle=IdleLock(minutes=60), actor="staff:bench", prompts=prompts
    )
    window.show()
    shown: list[bool] = []
    controller.notes_shown.connect(lambda: shown.append(True))
    first_show = Heartbeat()
    start = time.perf_counter()
    controller.unlock(str(path), "x", False)
    wait(app, lambda: bool(shown))
    window.table.viewport().grab()  # paints the first page: fetch + decrypt on demand
    first_paint = time.perf_counter() - start
    wait(app, lambda: not controller.tasks.busy)
    first_show.timer.stop()

    page_times = []
    model = window.notes_model
    step = max(1, model.rowCount() // (pages + 1))
    for page in range(1, pages + 1):  # timed: scroll to a new page and paint it
        row = min(model.rowCount() - 1, page * step)
        t0 = time.perf_counter()
        window.table.scrollTo(model.index(row, 0))
        window.table.viewport().grab()  # asks for the page: it loads off the UI thread
        wait(app, lambda r=row: model.note_at(r) is not None)
        window.table.viewport().grab()  # and paints once it is there
        page_times.append(time.perf_counter() - t0)
        app.processEvents()

    plain, plain_floor = plain_table(app, model.rowCount(), window.table.viewport().size(), floor)
    beat = Heartbeat()
    watch = StackWatch(beat)
    beat.enter(PHASES[0])
    shown.clear()
    controller.open_person(str(PERSON))
    wait(app, lambda: bool(shown) and not controller.tasks.busy)
    beat.enter(PHASES[1])
    shown.clear()
    window.filters.status.setCurrentIndex(1)
    wait(app, lambda: bool(shown) and not controller.tasks.busy)
    beat.enter(PHASES[2])
    for page in range(pages, 0, -1):  # as a person scrolls: the view repaints on its own
        window.table.scrollTo(model.index(min(model.rowCount() - 1, page * step + 7), 0))
        end = time.perf_counter() + 0.05
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.001)
    beat.enter(PHASES[3])
    for row in (0, model.rowCount() // 2, model.rowCount() - 1):
        window.table.selectRow(row)
        wait(app, lambda: not controller.tasks.busy)
    beat.enter(PHASES[4])
    for needle in ("item 4242 ", ""):  # typed (the timer waits for a pause), then cleared
        shown.clear()
        window.filters.search.setText(needle)
        wait(app, lambda: bool(shown) and not controller.tasks.busy)
    beat.enter(PHASES[5])
    for on in (True, False):
        shown.clear()
        window.filters.time_travel.setChecked(on)
        wait(app, lambda: bool(shown) and not controller.tasks.busy)
    beat.enter(PHASES[6])
    verified: list[bool] = []
    controller.verified.connect(verified.append)
    t0 = time.perf_counter()
    window.verify_action.trigger()
    window.tabs.setCurrentIndex(0)  # back to the notes, to scroll them
    scrolled = 0
    while not verified and time.perf_counter() - t0 < VERIFY_SCROLL_S:
        scrolled += 1
        row = (scrolled * 7919) % max(1, model.rowCount())
        window.table.scrollTo(model.index(row, 0))
        end = time.perf_counter() + 0.05
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.001)
    verify_s = time.perf_counter() - t0
    verify_done = bool(verified)
    controller.audit.cancel_verify()
    wait(app, lambda: not controller.tasks.busy)
    report_s = 0.0
    if len(PHASES) > 7:
        report_s = _report(app, controller, prompts, beat)
    beat.enter("end")
    watch.stop.set()
    worst_block = beat.worst
    beat.timer.stop()

    print(
        f"  {rows_label(model.rowCount())}: verify {verify_s:.1f} s"
        f" ({'finished' if verify_done else 'cancelled after scrolling'}),"
        f" access report {report_s:.1f} s; gaps over 50 ms:"
        f" {sorted(beat.gaps, reverse=True)[:8]}"
    )
    print(
        "    phase took: " + ", ".join(f"{p} {beat.spent.get(p, 0) / 1000:.1f} s" for p in PHASES)
    )
    outside = floor.worst_by_span(beat.spans)
    print(f"    a plain Qt table scrolled the same way: {plain}/{plain_floor} ms")
    print(
        "    longest block, ours / the bare window's at the same time (ms): "
        + ", ".join(f"{p} {beat.by_phase.get(p, 0)}/{outside.get(p, 0)}" for p in PHASES)
    )
    rows = model.rowCount()
    controller.lock("done")
    controller.tasks.wait()  # a dropped verify stops at its next check or store call
    window.close()
    window.deleteLater()
    app.processEvents()
    return {
        "first_paint": first_paint,
        "page": statistics.median(page_times),
        "worst_block_ms": float(worst_block),
        "first_show_block_ms": float(first_show.worst),
        "rows": float(rows),
        **{f"block:{phase}": float(beat.by_phase.get(phase, 0)) for phase in PHASES},
        **{f"floor:{phase}": float(outside.get(phase, 0)) for phase in PHASES},
        "plain_table_ms": float(plain),
        "plain_table_floor_ms": float(plain_floor),
    }


def plain_table(app: QApplication, rows: int, size: QSize, floor: Floor) -> tuple[int, int]:
    """A second reference beside the bare window: a plain QTableView over a
    QStandardItemModel of as many rows (no Engram: Qt's own painting on this machine),
    scrolled as the "scroll" phase scrolls, under the same timer. Its longest gap, and the
    bare window's meanwhile."""
    model = QStandardItemModel(rows, 9)
    step = max(1, rows // 11)
    wanted = sorted(
        {min(rows - 1, max(0, page * step + 7 + d)) for page in range(11) for d in range(-5, 45)}
    )
    for row in wanted:
        for column in range(9):
            model.setItem(row, column, QStandardItem(f"note {row}: prefers item {row} ({column})"))
    view = QTableView()
    view.setModel(model)
    view.resize(size)
    view.show()
    app.processEvents()
    beat = Heartbeat()
    beat.enter("plain Qt table")
    for page in range(10, 0, -1):
        view.scrollTo(model.index(min(rows - 1, page * step + 7), 0))
        end = time.perf_counter() + 0.05
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.001)
    beat.enter("end")
    beat.timer.stop()
    view.close()
    view.deleteLater()
    app.processEvents()
    outside = floor.worst_by_span(beat.spans).get("plain Qt table", 0)
    return beat.by_phase.get("plain Qt table", 0), outside


def _report(
    app: QApplication, controller: InspectorController, prompts: BenchPrompts, beat: Heartbeat
) -> float:
    """Write the access report from the window; seconds until it is saved."""
    beat.enter(PHASES[7])
    saved: list[str] = []
    controller.person_actions.report_saved.connect(saved.append)
    t0 = time.perf_counter()
    controller.w.report_action.trigger()
    while not saved and not any(m.startswith("error") for m in prompts.shown):
        if time.perf_counter() - t0 > REPORT_LIMIT_S:  # a loaded machine: say so, go on
            print(f"    the access report was not written in {REPORT_LIMIT_S:.0f} s: cancelled")
            for job in controller.tasks.jobs:
                controller.tasks.cancel(job)
            break
        app.processEvents()
        time.sleep(0.001)
    report_s = time.perf_counter() - t0
    wait(app, lambda: not controller.tasks.busy)
    return report_s


def full_collections_during_verify(path: Path, folder: Path, held: bool) -> str:
    """Verify the store as the window's job does, with (or without) the collector held:
    how many full collections ran, and the longest (each stops every thread)."""
    copy = folder / f"gc-{held}-{path.name}"
    for end in ("", ".checkpoint"):
        shutil.copy(path.with_name(path.name + end), copy.with_name(copy.name + end))
    store = Store.open(str(copy), passphrase="x")
    gc.collect()
    gc.freeze()  # as the window does when a store opens
    hold = CollectorHold()
    if held:
        hold.hold()
    pauses: list[float] = []
    began = [0.0]

    def timed(phase: str, info: dict[str, int]) -> None:
        if info["generation"] == 2:
            if phase == "start":
                began[0] = time.perf_counter()
            else:
                pauses.append((time.perf_counter() - began[0]) * 1000)

    gc.callbacks.append(timed)
    try:
        t0 = time.perf_counter()
        forensics.verify_store(store, lambda _d, _t: None, lambda: False)
        took = time.perf_counter() - t0
    finally:
        gc.callbacks.remove(timed)
        if held:
            hold.release()
        store.close()
        gc.unfreeze()
    return (
        f"verify {took:.1f} s, {len(pauses)} full collections, longest "
        f"{max(pauses, default=0):.0f} ms, {sum(pauses):.0f} ms in all"
    )


def rows_label(rows: int) -> str:
    return f"{rows:,} rows"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10k instead of 100k notes")
    parser.add_argument("--rounds", type=int, default=3, help="samples of each store size")
    parser.add_argument(
        "--collector",
        choices=("session", "jobs", "off"),
        default="session",
        help="full collections held off while a store is open (the inspector's way), only "
        "while jobs run, or never",
    )
    parser.add_argument("--no-report", action="store_true", help="skip the access report")
    parser.add_argument("--stores", help="a folder to keep the built stores in, for reruns")
    parser.add_argument("--json", type=Path, default=None, help="also write the verdicts here")
    args = parser.parse_args()
    if args.collector != "session":
        CollectorHold.for_session = False
    if args.collector == "off":
        CollectorHold.hold = CollectorHold.release = lambda self: None  # type: ignore[method-assign]
    print(f"full collections held off: {args.collector}")
    global PHASES
    if args.no_report:
        PHASES = PHASES[:-1]
    big = 10_000 if args.quick else 100_000
    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        kept = Path(args.stores) if args.stores else folder
        kept.mkdir(parents=True, exist_ok=True)
        small_path, big_path = kept / "small.engram", kept / f"big{big}.engram"
        for path, notes in ((small_path, 1_000), (big_path, big)):
            if path.exists():  # --stores: built by an earlier run (copied: runs change it)
                copy = folder / f"run-{path.name}"
                for end in ("", ".checkpoint"):
                    shutil.copy(path.with_name(path.name + end), copy.with_name(copy.name + end))
                if path is small_path:
                    small_path = copy
                else:
                    big_path = copy
                continue
            print(f"building {notes:,} notes: {build(path, notes):.1f} s")
        runs: dict[str, list[dict[str, float]]] = {"1k": [], "big": []}
        floor = Floor()  # the outside floor: a bare Qt window's heartbeat, meanwhile
        try:
            for _ in range(args.rounds):  # interleaved, so machine noise hits both alike
                runs["1k"].append(measure(app, small_path, folder, 10, floor))
                runs["big"].append(measure(app, big_path, folder, 10, floor))
            if args.collector == "session":
                for held in (False, True):
                    print(
                        f"full collections during a verify of {big:,} notes, collector "
                        f"{'held' if held else 'not held'}: "
                        + full_collections_during_verify(big_path, folder, held)
                    )
        finally:
            floor.stop()
    small = {k: statistics.median(r[k] for r in runs["1k"]) for k in runs["1k"][0]}
    large = {k: statistics.median(r[k] for r in runs["big"]) for k in runs["big"][0]}
    worst = max(r["worst_block_ms"] for rs in runs.values() for r in rs)
    print()
    print(
        f"{'measure':<28}{'1k notes':>12}{f'{big:,} notes':>16}{'ratio':>8}{'target':>9}  verdict"
    )
    for key, label in (("first_paint", "first paint of the table"), ("page", "one scrolled page")):
        ratio = large[key] / small[key]
        verdict = "PASS" if ratio <= 1.5 else "MISS"
        print(
            f"{label:<28}{small[key] * 1000:>10.1f}ms{large[key] * 1000:>14.1f}ms"
            f"{ratio:>8.2f}{'<= 1.5':>9}  {verdict}"
        )
    verdict = "PASS" if worst <= 50 else "MISS"
    print(
        f"{'longest UI-thread block':<28}{small['worst_block_ms']:>10.0f}ms"
        f"{large['worst_block_ms']:>14.0f}ms{'':>8}{'<= 50ms':>9}  {verdict} (worst {worst:.0f} ms)"
    )
    outside = max(r[f"floor:{p}"] for rs in runs.values() for r in rs for p in PHASES)
    outside_worst = outside
    print(
        f"{'outside floor (bare window)':<28}{'':>45}  worst {outside:.0f} ms"
        f" (ours {worst / max(outside, 1):.1f}x)"
    )
    print(
        f"{'plain Qt table, scrolled':<28}"
        + " ".join(f"{r['plain_table_ms']:.0f}/{r['plain_table_floor_ms']:.0f}" for r in runs["1k"])
        + " | "
        + " ".join(
            f"{r['plain_table_ms']:.0f}/{r['plain_table_floor_ms']:.0f}" for r in runs["big"]
        )
        + " ms (no Engram; / the bare window meanwhile)"
    )
    print()
    print(
        "longest block per phase, every sample, ours/outside floor (a bare Qt window's "
        "same timer, in its own process, at the same moments) and the ratio (1k | big):"
    )
    for phase in PHASES:
        block, outside = f"block:{phase}", f"floor:{phase}"
        small_runs = " ".join(_sample(r[block], r[outside]) for r in runs["1k"])
        big_runs = " ".join(_sample(r[block], r[outside]) for r in runs["big"])
        print(f"  {phase:<24}{small_runs}  | {big_runs}")
    if args.json is not None:
        verdicts = [
            Verdict(
                f"inspector {label}, {big:,} / 1,000 notes (median)",
                large[key],
                small[key],
                1.5,
                "the same step on a 1k-note store, same run, interleaved",
            )
            for key, label in (("first_paint", "first paint"), ("page", "scrolled page"))
        ]
        verdicts.append(
            Verdict(
                "inspector longest UI-thread block, every phase and sample / 50 ms",
                worst,
                50.0,
                1.0,
                f"10 ms heartbeat on the UI thread; a bare Qt window's worst meanwhile: "
                f"{outside_worst:.0f} ms",
                unit="ms",
            )
        )
        args.json.write_text(json.dumps(verdict_rows(verdicts, "bench_inspector", args.quick)))
    return 0


def _sample(ours: float, outside: float) -> str:
    return f"{ours:4.0f}/{outside:<4.0f}ms ({ours / max(outside, 1):4.1f}x)"


if __name__ == "__main__":
    sys.exit(main())
