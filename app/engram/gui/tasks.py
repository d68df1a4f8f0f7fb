"""Running engine work off the UI thread (Anki's CollectionOp, Dangerzone's progress).

Every store call the inspector makes goes through TaskRunner.run: the function runs on one
worker thread (store work is serialised, as in Anki), and its result, error or progress
comes back to the UI thread as queued signals. A task may report progress and poll a
cancel flag, which the UI sets from a Cancel button.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from engram.model.errors import EngramError

log = logging.getLogger(__name__)


class TaskContext:
    """What a task function gets: a progress reporter and a cancel flag to poll."""

    def __init__(self, task: Task) -> None:
        self._task = task
        self._cancel = threading.Event()

    def progress(self, done: int, total: int) -> None:
        """Report progress (any thread)."""
        self._task.progressed.emit(done, total)

    def cancelled(self) -> bool:
        """Whether the user asked to stop."""
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Ask the task to stop at its next check."""
        self._cancel.set()


class Task(QObject):
    """One unit of background work; lives on the UI thread, so its slots run there."""

    progressed = Signal(int, int)
    _finished = Signal(object)
    _failed = Signal(str)

    def __init__(
        self,
        fn: Callable[[TaskContext], Any],
        on_done: Callable[[Any], None] | None,
        on_error: Callable[[str], None] | None,
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self.fn = fn
        self.context = TaskContext(self)
        self._on_done = on_done
        self._on_error = on_error
        self._finished.connect(self._deliver)
        self._failed.connect(self._deliver_error)
        self.finished_event = threading.Event()

    def execute(self) -> None:
        """Runs on the worker thread."""
        try:
            result = self.fn(self.context)
        except EngramError as error:
            self._failed.emit(str(error))
        except Exception as error:  # a bug: keep the window alive, say so plainly
            log.exception("background task failed")
            self._failed.emit(f"Something went wrong ({type(error).__name__}: {error}).")
        else:
            self._finished.emit(result)

    @Slot(object)
    def _deliver(self, result: Any) -> None:
        self.finished_event.set()
        if self._on_done is not None:
            self._on_done(result)
        self.deleteLater()

    @Slot(str)
    def _deliver_error(self, message: str) -> None:
        self.finished_event.set()
        if self._on_error is not None:
            self._on_error(message)
        self.deleteLater()


class _Runnable(QRunnable):
    def __init__(self, task: Task) -> None:
        super().__init__()
        self.task = task

    def run(self) -> None:
        self.task.execute()


# A worker busy in Python holds the GIL for up to the switch interval (5 ms by default)
# each time the UI thread asks for it, and painting a table asks thousands of times. A short
# interval keeps the window responsive while store work runs.
GIL_SWITCH_INTERVAL_S = 0.0005


class TaskRunner(QObject):
    """Runs tasks one at a time on a worker thread; tells the UI when it is busy."""

    busy_changed = Signal(bool)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL_S))
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self._pending = 0

    def run(
        self,
        fn: Callable[[TaskContext], Any],
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[str], None] | None = None,
        priority: int = 0,
    ) -> Task:
        """Queue `fn`; `on_done`/`on_error` run later on the UI thread. Queued tasks of a
        higher `priority` run first."""
        task = Task(fn, on_done, on_error or self.failed.emit, self)
        self._pending += 1
        self.busy_changed.emit(True)
        task.destroyed.connect(self._one_done)
        self.pool.start(_Runnable(task), priority)
        return task

    @Slot()
    def _one_done(self) -> None:
        self._pending -= 1
        if self._pending == 0:
            self.busy_changed.emit(False)

    @property
    def busy(self) -> bool:
        """Whether any task is queued or running."""
        return self._pending > 0

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the worker is idle (shutdown and tests)."""
        return bool(self.pool.waitForDone(msecs))
