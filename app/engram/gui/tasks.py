"""Running engine work off the UI thread (Anki's CollectionOp, Dangerzone's progress).

Two lanes, so a long job never holds what the person is waiting for (issue 17 item 7):

- `TaskRunner.run` is the interactive lane: a page of notes, a note's detail, opening a
  person, a transcript, a small change. It has one worker thread of its own, so these stay
  in the order they were asked (higher `priority` first) and never wait behind a job.
- `TaskRunner.start_job` is the jobs lane: verify, export, the access report, learning,
  time travel and text searches over a big person. Jobs run on threads of their own beside
  the interactive lane, are listed (`jobs`, `job_started`, `job_ended`) for the status
  bar's jobs strip with their progress and a Cancel button, and are dropped when the store
  locks (`drop_jobs`): a dropped or cancelled job's result is never delivered.

Results, errors and progress come back to the UI thread as queued signals. The store is
safe to use from both lanes at once (store/store.py says how).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
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
        title: str = "",
        on_cancel: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.fn = fn
        self.title = title  # a job's name in the jobs strip ("" for interactive work)
        self.context = TaskContext(self)
        self._on_done = on_done
        self._on_error = on_error
        self.on_cancel = on_cancel  # a job cancelled by the person: the UI says so at once
        self.cancellable = True  # whether the jobs strip offers Cancel
        self.on_over: Callable[[Task], None] | None = None  # the runner's, for a job
        self.dropped = False  # cancelled or locked: what it returns is thrown away
        self._finished.connect(self._deliver)
        self._failed.connect(self._deliver_error)
        self.finished_event = threading.Event()

    def execute(self) -> None:
        """Runs on the worker thread."""
        try:
            result = self.fn(self.context)
        except EngramError as error:
            self._tell("_failed", str(error))
        except Exception as error:  # a bug: keep the window alive, say so plainly
            if not self.dropped:  # a dropped job fails as its store closes under it
                log.exception("background task failed")
            self._tell("_failed", f"Something went wrong ({type(error).__name__}: {error}).")
        else:
            self._tell("_finished", result)

    def _tell(self, signal: str, value: Any) -> None:
        try:
            getattr(self, signal).emit(value)
        except RuntimeError:  # the window closed while a dropped job ran: nobody to tell
            if not self.dropped:
                raise

    def drop(self) -> None:
        """Stop at the next check and never deliver: nobody waits for this any more."""
        self.dropped = True
        self.context.cancel()

    def _over(self) -> None:
        self.finished_event.set()
        if self.on_over is not None:
            self.on_over(self)

    @Slot(object)
    def _deliver(self, result: Any) -> None:
        self._over()
        if self._on_done is not None and not self.dropped:
            self._on_done(result)
        self.deleteLater()

    @Slot(str)
    def _deliver_error(self, message: str) -> None:
        self._over()
        if self._on_error is not None and not self.dropped:
            self._on_error(message)
        self.deleteLater()


class _Runnable(QRunnable):
    def __init__(self, task: Task) -> None:
        super().__init__()
        self.task = task

    def run(self) -> None:
        self.task.execute()


class _JobRunnable(_Runnable):
    """A job: its thread yields the processor to the UI thread (a higher nice value, on
    systems that set it per thread), so a verify busy in SQLite does not take the core the
    window needs to repaint when the machine is loaded."""

    _niced = threading.local()

    def run(self) -> None:
        if not getattr(self._niced, "done", False):
            self._niced.done = True
            with contextlib.suppress(AttributeError, OSError):  # Linux only; elsewhere not
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), JOB_NICENESS)
        super().run()


# A worker busy in Python holds the GIL for up to the switch interval (5 ms by default)
# each time the UI thread asks for it, and painting a table asks thousands of times. A short
# interval keeps the window responsive while store work runs.
GIL_SWITCH_INTERVAL_S = 0.0005
# Jobs that may run at once beside the interactive lane: a verify, a search typed meanwhile
# and an export need not wait for one another.
JOB_THREADS = 3
JOB_NICENESS = 10  # the jobs lane's threads, beside the UI's 0
# A full-collection threshold no job reaches (it counts middle-generation collections).
FULL_COLLECTIONS_NEVER = 1 << 30


class CollectorHold:
    """Keeps CPython's full (gen-2) collections out of the UI thread's way.

    A full collection walks every tracked object while holding the GIL, so every thread,
    the UI's included, stops for it: a job with a big working set (verify walking 100k
    entries) set one off every few hundred milliseconds, each over a second long, and a
    time-travel listing of 100k notes made each later one 200 ms long (issue 17 item 8).
    While held, only the young generations are collected (they are small whatever the
    store's size, and free the short-lived cycles); what survives them waits for the full
    collection made when the last holder lets go. The runner holds it while any job runs;
    the store lock holds it while a store is open (`for_session`), and collects on lock,
    when nobody is scrolling (tests/perf/bench_inspector.py --collector compares).
    """

    for_session = True

    def __init__(self) -> None:
        self._holders = 0
        self._saved: tuple[int, int, int] | None = None

    def hold(self) -> None:
        """One more holder (a job, or an open store)."""
        self._holders += 1
        if self._holders == 1:
            self._saved = gc.get_threshold()
            young, middle, _full = self._saved
            gc.set_threshold(young, middle, FULL_COLLECTIONS_NEVER)

    def release(self) -> None:
        """One holder fewer; the last one brings the usual thresholds back."""
        self._holders -= 1
        if self._holders == 0 and self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def hold_session(self) -> None:
        """A store opened: hold until it locks (unless `for_session` is off)."""
        if self.for_session:
            self.hold()

    def release_session(self) -> None:
        """The store locked: let go, and collect now, while the unlock page shows."""
        if self.for_session:
            self.release()
            gc.collect()


class TaskRunner(QObject):
    """The interactive lane (`run`) and the jobs lane (`start_job`); says when it is busy."""

    busy_changed = Signal(bool)  # interactive work queued or running (the "working…" label)
    failed = Signal(str)
    job_started = Signal(object)  # a Task with a title
    job_ended = Signal(object)  # it finished, failed, was cancelled or dropped

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL_S))
        self.pool = QThreadPool(self)  # the interactive lane
        self.pool.setMaxThreadCount(1)
        self.job_pool = QThreadPool(self)
        self.job_pool.setMaxThreadCount(JOB_THREADS)
        self.collector = CollectorHold()
        self._pending = 0  # queued, running, or delivering its result
        self._working = 0  # queued or running: what the "working…" label shows
        self._jobs: list[Task] = []

    def run(
        self,
        fn: Callable[[TaskContext], Any],
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[str], None] | None = None,
        priority: int = 0,
    ) -> Task:
        """Queue interactive work `fn`; `on_done`/`on_error` run later on the UI thread.
        Queued tasks of a higher `priority` run first."""
        task = Task(fn, on_done, on_error or self.failed.emit, self)
        self._pending += 1
        self._working += 1
        if self._working == 1:
            self.busy_changed.emit(True)
        # The label lets go when the function returns, before its result is delivered: a
        # result that opens a dialog (an erasure's report) must not leave "working…" under
        # it while nothing works (found under openbox).
        task.on_over = self._interactive_over
        task.destroyed.connect(self._one_done)
        self.pool.start(_Runnable(task), priority)
        return task

    def start_job(
        self,
        title: str,
        fn: Callable[[TaskContext], Any],
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[str], None] | None = None,
        on_cancel: Callable[[], None] | None = None,
        *,
        cancellable: bool = True,
    ) -> Task:
        """Run a long job beside the interactive lane, listed under `title` with its
        progress (`fn` reports through its TaskContext and polls `cancelled`). `on_done`
        and `on_error` run on the UI thread, unless the job was cancelled or dropped;
        `on_cancel` runs when the person cancels it (Cancel, or the panel's own button). A
        change that cannot stop part-way (learning) is not `cancellable`: it offers no
        Cancel, though a lock still drops what it returns."""
        task = Task(fn, on_done, on_error or self.failed.emit, self, title, on_cancel)
        task.cancellable = cancellable
        self._jobs.append(task)
        self.collector.hold()
        task.on_over = self._job_over
        self.job_started.emit(task)
        self.job_pool.start(_JobRunnable(task))
        return task

    def _job_over(self, task: Task) -> None:
        """A job's function returned (on the UI thread, before its result is delivered, so
        the strip and `busy` have let go of it when its `on_done` runs)."""
        self.collector.release()
        self._forget(task)

    def _forget(self, task: Task) -> None:
        if task in self._jobs:
            self._jobs.remove(task)
            self.job_ended.emit(task)

    def cancel(self, task: Task) -> None:
        """The person cancels a job: it is gone from the list at once, stops at its next
        check, and what it returns is never delivered."""
        if task.dropped or not task.cancellable:
            return
        task.drop()
        self._forget(task)
        if task.on_cancel is not None:
            task.on_cancel()

    def drop(self, task: Task) -> None:
        """Nobody needs a task's result any more (a newer search replaced it): it stops at
        its next check, delivers nothing, and a job leaves the list; nothing is said."""
        task.drop()
        self._forget(task)

    def drop_jobs(self) -> None:
        """The store locks: every job stops at its next check, and none delivers (the
        panels forget what they showed from the lock itself)."""
        for task in list(self._jobs):
            self.drop(task)

    @property
    def jobs(self) -> list[Task]:
        """The jobs running now, oldest first (cancelled ones are no longer listed)."""
        return list(self._jobs)

    @Slot()
    def _interactive_over(self, _task: Task) -> None:
        self._working -= 1
        if self._working == 0:
            self.busy_changed.emit(False)

    def _one_done(self) -> None:
        self._pending -= 1

    @property
    def interactive_busy(self) -> bool:
        """Whether interactive work is queued or running."""
        return self._pending > 0

    @property
    def busy(self) -> bool:
        """Whether any work, interactive or a job, is queued or running."""
        return self._pending > 0 or bool(self._jobs)

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until both lanes are idle (shutdown and tests)."""
        return bool(self.pool.waitForDone(msecs)) and bool(self.job_pool.waitForDone(msecs))

    def wait_interactive(self, msecs: int = 30_000) -> bool:
        """Block until the interactive lane is idle (a lock: its work is short)."""
        return bool(self.pool.waitForDone(msecs))
