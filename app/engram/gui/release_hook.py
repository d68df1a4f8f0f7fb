"""The inspector's side of release requests (store/release.py): while a store is open,
poll it on the UI thread's timer; when another Engram process asks every holder to let go
(it is finishing an erasure), the store has already dropped its keys, decrypted text and
idle connections, and `released` tells the window to drop what it holds too."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from engram.store.store import Store

POLL_MS = 250


class ReleaseHook(QObject):
    """Polls the open store for release requests; emits `released` on each new one."""

    released = Signal()

    def __init__(self, parent: QObject, on_release: Callable[[], None] | None = None) -> None:
        super().__init__(parent)
        self._store: Store | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)
        if on_release is not None:
            self.released.connect(on_release)

    def watch(self, store: Store | None) -> None:
        """Start watching an opened store; None (on lock) stops."""
        self._store = store
        if store is None:
            self._timer.stop()
        else:
            self._timer.start()

    def _poll(self) -> None:
        if self._store is not None and self._store.release_requested():
            self.released.emit()
