"""The UI thread's heartbeat, and the outside floor it is compared with (issue 17 item 8).

`Heartbeat` is a 10 ms QTimer on the UI thread: the longest gap between two ticks is the
longest time the event loop could not run. `Floor` runs the same timer in a bare Qt window
in a process of its own (no Engram imported, nothing else to do) beside a benchmark, so
what the machine itself does to a Qt event loop — other processes on the same cores — is
measured at the same moments, and a phase's gap can be read against it.

Run as a script it is that bare window: `python heartbeat.py OUT` ticks until killed and
appends one line per late tick to OUT: "<monotonic seconds> <gap ms>".
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication, QWidget

INTERVAL_MS = 10
LATE_MS = 12  # a tick later than this is written down by the floor


class Heartbeat:
    """A 10 ms timer on the UI thread; the longest gap between ticks is the worst block.
    Gaps count for the phase entered last (a gap spanning the change counts for the new
    one); `spans` says when each phase ran, in time.monotonic() seconds (the floor's)."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.clock.start()
        self.last = self.clock.elapsed()
        self.worst = 0
        self.timer = QTimer()
        self.timer.setInterval(INTERVAL_MS)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

        self.phase = "start"
        self.gaps: list[tuple[int, str]] = []
        self.by_phase: dict[str, int] = {}
        self.spent: dict[str, int] = {}  # ms spent in each phase
        self.entered = self.last
        self.spans: list[tuple[str, float, float]] = []
        self._began = time.monotonic()

    def tick(self) -> None:
        now = self.clock.elapsed()
        gap = now - self.last
        self.worst = max(self.worst, gap)
        self.by_phase[self.phase] = max(self.by_phase.get(self.phase, 0), gap)
        if gap > 50:
            self.gaps.append((gap, self.phase))
        self.last = now

    def enter(self, phase: str) -> None:
        """Gaps from here on count for `phase`."""
        now = self.clock.elapsed()
        self.spent[self.phase] = self.spent.get(self.phase, 0) + now - self.entered
        self.entered = now
        moment = time.monotonic()
        self.spans.append((self.phase, self._began, moment))
        self._began = moment
        self.phase = phase
        self.by_phase.setdefault(phase, 0)


class Floor:
    """The bare window's heartbeat, running in its own process while a benchmark runs."""

    def __init__(self) -> None:
        handle, name = tempfile.mkstemp(prefix="engram-floor-", suffix=".txt")
        os.close(handle)
        self.path = Path(name)
        env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
        self.child = subprocess.Popen(
            [sys.executable, str(Path(__file__)), str(self.path)], env=env
        )

    def late_ticks(self) -> list[tuple[float, int]]:
        """(when, gap ms) of every late tick so far."""
        ticks = []
        for line in self.path.read_text().splitlines():
            when, gap = line.split()
            ticks.append((float(when), int(gap)))
        return ticks

    def worst_by_span(self, spans: list[tuple[str, float, float]]) -> dict[str, int]:
        """The floor's longest gap while each phase ran (a late tick ending in it)."""
        ticks = self.late_ticks()
        worst: dict[str, int] = {}
        for phase, start, end in spans:
            inside = [gap for when, gap in ticks if start <= when <= end]
            worst[phase] = max(worst.get(phase, INTERVAL_MS), *inside, INTERVAL_MS)
        return worst

    def stop(self) -> None:
        self.child.kill()
        self.child.wait()
        self.path.unlink(missing_ok=True)


def _bare_window(out: Path) -> int:
    """Be the floor: a bare Qt window, the same timer, until killed."""
    app = QApplication(sys.argv[:1])
    window = QWidget()
    window.resize(900, 600)
    window.show()
    beat = Heartbeat()
    with out.open("a", buffering=1) as late:

        def tick() -> None:
            before = beat.last
            beat.tick()
            gap = beat.last - before
            if gap > LATE_MS:
                late.write(f"{time.monotonic():.4f} {gap}\n")

        beat.timer.timeout.disconnect()
        beat.timer.timeout.connect(tick)
        return app.exec()


if __name__ == "__main__":
    sys.exit(_bare_window(Path(sys.argv[1])))
