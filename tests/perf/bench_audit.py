"""The audit workspace on a big journal (issue 21 item 5): paging through every entry must
never block the UI thread for long.

Target: the longest gap of a 10 ms heartbeat timer on the UI thread stays under 50 ms in
every phase while the audit tab is used on a 1M-event journal: open the tab (the count and
the newest page), page through the whole journal (jumps to 20 places, each page waited
for and painted), narrow by actor, by action, type a search key after key (its first
matches; the rest is searched as a job while the person keeps scrolling, then
cancelled), and save a narrowed listing as CSV. A page's time is printed too; and the same
run on a 10k-event journal is the baseline (the ratio of page times).

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python tests/perf/bench_audit.py [--events N]
     [--stores DIR] (keep the built store for reruns) [--quick] (100k events)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench_inspector import StackWatch  # BENCH_STACKS=1: what the UI thread ran when late
from heartbeat import Floor, Heartbeat
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from engram.gui.controller import InspectorController
from engram.gui.idle_lock import IdleLock
from engram.gui.main_window import MainWindow
from engram.gui.prompts import Prompts
from engram.model.event_bodies import Exported, ItemUsed
from engram.model.events import EventType, NewEvent
from engram.model.ids import NoteId, PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.note_writes import NoteDraft, note_added
from engram.store import crypto, journal
from engram.store.store import Store

PERSON = PersonId("pat")
BATCH = 5_000
ACTORS = ("staff:dana", "staff:lee", "runtime", "extractor")
PHASES = (
    "open the audit tab",
    "page through the journal",
    "only one actor",
    "only one action",
    "typed search",
    "scroll while searching",
    "save as CSV",
)
JUMPS = 20
SEARCH_SCROLL_S = 10.0


class BenchPrompts(Prompts):
    """The real dialog host; the save dialog answers with a path in the bench's folder."""

    def __init__(self, parent: MainWindow, folder: Path) -> None:
        super().__init__(parent)
        self.folder = folder

    def save_path(self, suggested: str, caption: str) -> str | None:
        return str(self.folder / suggested)

    def inform(self, title: str, text: str) -> None:
        pass

    def error(self, message: str) -> None:
        print(f"    error: {message}")


def batch(first: int, size: int, notes: list[NoteId]) -> list[NewEvent]:
    """A realistic mix: a note learned every 20 entries, its use by the agent every 5,
    the rest staff actions that quote nothing (exports)."""
    events: list[NewEvent] = []
    for n in range(first, first + size):
        if n % 20 == 0:
            draft = NoteDraft(
                f"note {n}: prefers item {n} over the others", Kind.FACT, Scope.DIRECT
            )
            event = note_added(draft, "extractor", None, None)
            notes.append(NoteId(str(event.body.named_notes()[0])))
            events.append(event)
        elif n % 5 == 0 and notes:
            events.append(
                NewEvent(EventType.ITEM_USED, "runtime", ItemUsed((notes[-1],), "recall"))
            )
        else:
            actor = ACTORS[n % 2]
            events.append(NewEvent(EventType.EXPORTED, actor, Exported("export", "file")))
    return events


def build(path: Path, events: int) -> float:
    """A store whose one person's journal holds `events` entries; seconds spent."""
    start = time.perf_counter()
    store = Store.create(
        str(path), passphrase="x", use_keyring=False, kdf=crypto.FAST_KDF_FOR_TESTS
    )
    with store.write() as txn:
        journal.ensure_person(store, txn, PERSON)
    made, notes = 1, []  # the person's creation is the first entry
    while made < events:
        size = min(BATCH, events - made)
        with store.write() as txn:
            journal.append(store, txn, PERSON, batch(made, size, notes))
        made += size
        if made % 100_000 < BATCH:
            print(f"    {made:,} entries, {time.perf_counter() - start:.0f} s")
    store.close()
    return time.perf_counter() - start


def wait(app: QApplication, done: callable, limit: float = 300.0) -> None:  # type: ignore[valid-type]
    deadline = time.perf_counter() + limit
    while not done():
        if time.perf_counter() > deadline:
            raise SystemExit("timed out")
        app.processEvents()
        time.sleep(0.001)


def settle(app: QApplication, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.001)


def measure(app: QApplication, path: Path, folder: Path, floor: Floor) -> dict[str, float]:
    """Use the audit tab of a fresh window while a heartbeat watches the UI thread."""
    settings = QSettings(str(folder / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow()
    prompts = BenchPrompts(window, folder)
    controller = InspectorController(
        window, settings=settings, idle=IdleLock(minutes=60), actor="staff:bench", prompts=prompts
    )
    window.show()
    opened: list[bool] = []
    controller.person_opened.connect(lambda *_: opened.append(True))
    controller.unlock(str(path), "x", False)
    wait(app, lambda: bool(opened) and not controller.tasks.busy)
    log = window.audit.log
    table = log.table
    shown: list[bool] = []
    controller.audit_shown.connect(lambda: shown.append(True))

    beat = Heartbeat()
    watch = StackWatch(beat)
    beat.enter(PHASES[0])
    t0 = time.perf_counter()
    window.tabs.setCurrentWidget(window.audit)
    wait(app, lambda: bool(shown))
    table.viewport().grab()
    first_listing = time.perf_counter() - t0
    wait(app, lambda: not controller.tasks.busy)  # the seqs, read in the background
    model = log.model  # each listing has a model of its own: read it after each one
    rows = model.rowCount()

    beat.enter(PHASES[1])
    page_times = []
    for jump in range(JUMPS):
        row = min(rows - 1, jump * rows // JUMPS + 17)
        t0 = time.perf_counter()
        table.scrollTo(model.index(row, 0))
        table.viewport().grab()  # asks for the page: it loads off the UI thread
        wait(app, lambda r=row: model.row_at(r) is not None)
        table.viewport().grab()  # and paints once it is there
        page_times.append(time.perf_counter() - t0)
        settle(app, 0.02)

    beat.enter(PHASES[2])
    shown.clear()
    log.actor.setCurrentIndex(log.actor.findData("staff:lee"))
    wait(app, lambda: bool(shown) and not controller.tasks.busy)
    actor_rows = log.model.rowCount()
    table.scrollTo(log.model.index(actor_rows // 2, 0))
    wait(app, lambda: log.model.row_at(actor_rows // 2) is not None)

    beat.enter(PHASES[3])
    shown.clear()
    log.actor.setCurrentIndex(0)
    wait(app, lambda: bool(shown) and not controller.tasks.busy)
    shown.clear()
    log.action.setCurrentIndex(log.action.findData("note_added"))
    wait(app, lambda: bool(shown) and not controller.tasks.busy)
    action_rows = log.model.rowCount()

    beat.enter(PHASES[4])
    shown.clear()
    log.action.setCurrentIndex(0)
    wait(app, lambda: bool(shown) and not controller.tasks.busy)
    shown.clear()
    log.search.setFocus()
    t0 = time.perf_counter()
    for key in "item 4240":  # a key at a time, as typed: one search once typing pauses
        log.search.insert(key)
        settle(app, 0.03)
    wait(app, lambda: bool(shown))
    first_matches = time.perf_counter() - t0

    beat.enter(PHASES[5])
    t0 = time.perf_counter()
    finished = [False]
    controller.audit_log.search_finished.connect(lambda _n: finished.__setitem__(0, True))
    scrolled = 0
    while not finished[0] and time.perf_counter() - t0 < SEARCH_SCROLL_S:
        scrolled += 1
        total = max(1, log.model.rowCount())
        table.scrollTo(log.model.index((scrolled * 7919) % total, 0))
        settle(app, 0.05)
    search_s = time.perf_counter() - t0
    for job in controller.tasks.jobs:
        controller.tasks.cancel(job)
    wait(app, lambda: not controller.tasks.busy)

    beat.enter(PHASES[6])
    log.search.clear()
    shown.clear()
    log.action.setCurrentIndex(log.action.findData("note_added"))
    wait(app, lambda: bool(shown) and not controller.tasks.busy)
    saved: list[str] = []
    controller.audit_log.csv_saved.connect(saved.append)
    t0 = time.perf_counter()
    log.csv_button.click()
    wait(app, lambda: bool(saved) and not controller.tasks.busy, limit=900)
    csv_s = time.perf_counter() - t0
    beat.enter("end")
    watch.stop.set()
    beat.timer.stop()

    print(
        f"  {rows:,} entries: first listing {first_listing * 1000:.0f} ms, page "
        f"{statistics.median(page_times) * 1000:.0f} ms (median of {JUMPS}, worst "
        f"{max(page_times) * 1000:.0f} ms); one actor {actor_rows:,} rows, one action "
        f"{action_rows:,}; a typed search's first matches {first_matches * 1000:.0f} ms, "
        f"{'finished' if finished[0] else 'still searching'} after {search_s:.1f} s; "
        f"CSV of {action_rows:,} rows {csv_s:.1f} s"
    )
    print(f"    gaps over 50 ms: {sorted(beat.gaps, reverse=True)[:8]}")
    outside = floor.worst_by_span(beat.spans)
    print(
        "    longest block, ours / a bare Qt window's at the same time (ms): "
        + ", ".join(f"{p} {beat.by_phase.get(p, 0)}/{outside.get(p, 0)}" for p in PHASES)
    )
    controller.lock("done")
    controller.tasks.wait()
    window.close()
    window.deleteLater()
    app.processEvents()
    return {
        "rows": float(rows),
        "first_listing": first_listing,
        "page": statistics.median(page_times),
        "worst_block_ms": float(beat.worst),
        **{f"block:{p}": float(beat.by_phase.get(p, 0)) for p in PHASES},
        **{f"floor:{p}": float(outside.get(p, 0)) for p in PHASES},
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000, help="entries of the big journal")
    parser.add_argument("--quick", action="store_true", help="100k entries instead")
    parser.add_argument("--stores", help="a folder to keep the built stores in, for reruns")
    args = parser.parse_args()
    big = 100_000 if args.quick else args.events
    app = QApplication.instance() or QApplication(sys.argv[:1])
    results: dict[str, dict[str, float]] = {}
    floor = Floor()  # the outside floor: a bare Qt window's heartbeat, meanwhile
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        kept = Path(args.stores) if args.stores else folder
        kept.mkdir(parents=True, exist_ok=True)
        for label, events in (("10k", 10_000), ("big", big)):
            path = kept / f"audit{events}.engram"
            if not path.exists():
                print(f"building {events:,} journal entries:")
                print(f"  built in {build(path, events):.0f} s")
            run = folder / f"run-{path.name}"  # a run writes (the CSV's record): a copy
            for end in ("", ".checkpoint"):
                if path.with_name(path.name + end).exists():
                    shutil.copy(path.with_name(path.name + end), run.with_name(run.name + end))
            results[label] = measure(app, run, folder, floor)
    floor.stop()
    small, large = results["10k"], results["big"]
    worst = large["worst_block_ms"]
    print()
    print(f"{'measure':<30}{'10k':>10}{f'{big:,}':>14}{'ratio':>8}{'target':>10}  verdict")
    ratio = large["page"] / small["page"]
    print(
        f"{'one page, jumped to':<30}{small['page'] * 1000:>8.0f}ms{large['page'] * 1000:>12.0f}ms"
        f"{ratio:>8.2f}{'<= 1.5':>10}  {'PASS' if ratio <= 1.5 else 'MISS'}"
    )
    print(
        f"{'longest UI-thread block':<30}{small['worst_block_ms']:>8.0f}ms{worst:>12.0f}ms"
        f"{'':>8}{'<= 50ms':>10}  {'PASS' if worst <= 50 else 'MISS'}"
    )
    print("  longest block per phase, ours/the bare window's meanwhile:")
    for phase in PHASES:
        ours = f"{small[f'block:{phase}']:.0f}/{small[f'floor:{phase}']:.0f}"
        theirs = f"{large[f'block:{phase}']:.0f}/{large[f'floor:{phase}']:.0f}"
        print(f"  {phase:<28}{ours:>10}ms{theirs:>12}ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
