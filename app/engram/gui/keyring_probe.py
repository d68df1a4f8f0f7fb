"""Whether "Remember on this computer" can be offered: the OS keyring, asked off the UI
thread with a timeout (finding a backend can hang on a locked Secret Service)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from engram.gui.tasks import TaskContext, TaskRunner
from engram.store.keyring_access import KeyringAccess

NO_KEYRING = (
    "This computer has no usable OS keyring, so the key can be kept only behind the "
    "passphrase; you will type it each time."
)
CHECKING = "Checking this computer's keyring…"


class KeyringProbe(QObject):
    """The last answer about the keyring; `changed` when a new one arrives."""

    changed = Signal()

    def __init__(self, tasks: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.usable: bool | None = None  # None: not known yet
        self.reason = CHECKING  # why it cannot be offered (or that it is being checked)
        self._asking = False
        self._stale = False  # asked again while an answer was on its way

    def check(self) -> None:
        """Ask again, off the UI thread (a keyring can appear or go between two asks)."""
        if self._asking:
            self._stale = True  # the answer on its way predates this ask: ask once more
            return
        self._asking = True

        def ask(_: TaskContext) -> str | None:
            return KeyringAccess().usable_backend()

        self.tasks.run(ask, self._answered, self._failed, priority=1)

    def _answered(self, backend: str | None) -> None:
        self._asking = False
        if self._ask_again():
            return
        self.usable = backend is not None
        self.reason = "" if self.usable else NO_KEYRING
        self.changed.emit()

    def _failed(self, message: str) -> None:
        self._asking = False
        if self._ask_again():
            return
        self.usable = False
        self.reason = message
        self.changed.emit()

    def _ask_again(self) -> bool:
        """A stale answer is not published; the newer question is asked instead."""
        if not self._stale:
            return False
        self._stale = False
        self.check()
        return True
