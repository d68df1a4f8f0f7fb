"""Locks the inspector after a stretch without keyboard or mouse activity."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer, Signal

DEFAULT_MINUTES = 5
_ACTIVITY = {
    QEvent.Type.KeyPress,
    QEvent.Type.MouseButtonPress,
    QEvent.Type.MouseMove,
    QEvent.Type.Wheel,
    QEvent.Type.TouchBegin,
}


class IdleLock(QObject):
    """Emits `idle` once the clock passes the timeout since the last activity."""

    idle = Signal()

    def __init__(
        self,
        minutes: float = DEFAULT_MINUTES,
        clock: Callable[[], float] = time.monotonic,
        check_every_ms: int = 1000,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.clock = clock
        self.seconds = minutes * 60
        self.armed = False
        self._last = clock()
        self.timer = QTimer(self)
        self.timer.setInterval(check_every_ms)
        self.timer.timeout.connect(self.check)

    def arm(self) -> None:
        """Start watching (after an unlock)."""
        self._last = self.clock()
        self.armed = True
        self.timer.start()

    def disarm(self) -> None:
        """Stop watching (while locked)."""
        self.armed = False
        self.timer.stop()

    def touch(self) -> None:
        """Record activity."""
        self._last = self.clock()

    def check(self) -> None:
        """Lock if idle for too long."""
        if self.armed and self.clock() - self._last >= self.seconds:
            self.disarm()
            self.idle.emit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in _ACTIVITY:
            self.touch()
        return False
