"""The inspector on a big store: first paint and scrolled pages must not grow with the
store, and the UI thread must never be blocked for long.

Targets (issue 3): t(100k notes) / t(1k notes) <= 1.5 for the first paint of the notes
table and for each scrolled page; the longest gap of a 10 ms heartbeat timer on the UI
thread while the inspector is used (open a person, filter, scroll, select) stays under
50 ms. The one-time first show of a new window (Qt laying out and painting every widget)
is reported beside it.
Baseline in the same run: the same steps on a 1k-note store.

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python tests/perf/bench_inspector.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QElapsedTimer, QSettings, QTimer
from PySide6.QtWidgets import QApplication

from engram.gui.controller import InspectorController
from engram.gui.idle_lock import IdleLock
from engram.gui.main_window import MainWindow
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.note_writes import NoteDraft, note_added
from engram.store import crypto, journal
from engram.store.store import Store

PERSON = PersonId("pat")
BATCH = 5_000
SCOPES = list(Scope)
KINDS = list(Kind)
PHASES = ("open person again", "filter: all intervals", "scroll", "select notes")


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
        events = [
            note_added(
                NoteDraft(
                    f"note {made + i}: prefers item {made + i} over the others",
                    KINDS[i % 4],
                    SCOPES[i % 3],
                    confidence_bp=(made + i) * 37 % 10_000,
                ),
                "bench",
                None,
                None,
            )
            for i in range(size)
        ]
        with store.write() as txn:
            journal.append(store, txn, PERSON, events)
        made += size
    store.close()
    return time.perf_counter() - start


class Heartbeat:
    """A 10 ms timer on the UI thread; the longest gap between ticks is the worst block."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.clock.start()
        self.last = self.clock.elapsed()
        self.worst = 0
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

        self.phase = "start"
        self.gaps: list[tuple[int, str]] = []
        self.by_phase: dict[str, int] = {}

    def tick(self) -> None:
        now = self.clock.elapsed()
        gap = now - self.last
        self.worst = max(self.worst, gap)
        self.by_phase[self.phase] = max(self.by_phase.get(self.phase, 0), gap)
        if gap > 50:
            self.gaps.append((gap, self.phase))
        self.last = now

    def enter(self, phase: str) -> None:
        """Gaps from here on count for `phase` (a gap spanning the change counts for it)."""
        self.phase = phase
        self.by_phase.setdefault(phase, 0)


def wait(app: QApplication, done: callable, limit: float = 120.0) -> None:  # type: ignore[valid-type]
    deadline = time.perf_counter() + limit
    while not done():
        if time.perf_counter() > deadline:
            raise SystemExit("timed out")
        app.processEvents()
        time.sleep(0.001)


def measure(app: QApplication, path: Path, folder: Path, pages: int) -> dict[str, float]:
    """Open the store in a fresh window (first paint), then use it while a heartbeat watches
    the UI thread: open the person again, change a filter, scroll, select notes."""
    settings = QSettings(str(folder / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow()
    controller = InspectorController(
        window, settings=settings, idle=IdleLock(minutes=60), actor="bench"
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

    beat = Heartbeat()
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
    worst_block = beat.worst
    beat.timer.stop()
    if os.environ.get("BENCH_VERBOSE"):
        print("  gaps over 50 ms:", sorted(beat.gaps, reverse=True)[:6])
    rows = model.rowCount()
    controller.lock("done")
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
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10k instead of 100k notes")
    parser.add_argument("--rounds", type=int, default=3, help="samples of each store size")
    args = parser.parse_args()
    big = 10_000 if args.quick else 100_000
    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        small_path, big_path = folder / "small.engram", folder / "big.engram"
        print(f"building 1,000 notes: {build(small_path, 1_000):.1f} s")
        print(f"building {big:,} notes: {build(big_path, big):.1f} s")
        runs = {"1k": [], "big": []}
        for _ in range(args.rounds):  # interleaved, so machine noise hits both alike
            runs["1k"].append(measure(app, small_path, folder, 10))
            runs["big"].append(measure(app, big_path, folder, 10))
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
    print()
    print("longest block per phase, every sample (1k | big):")
    for phase in PHASES:
        key = f"block:{phase}"
        small_runs = " ".join(f"{r[key]:3.0f}" for r in runs["1k"])
        big_runs = " ".join(f"{r[key]:3.0f}" for r in runs["big"])
        print(f"  {phase:<24}{small_runs}  | {big_runs}  ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
