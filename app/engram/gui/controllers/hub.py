"""What every panel controller shares: the task runner, the dialog host and the session.

One signal, `session_changed`, carries lock, unlock and a change of person to every panel
(CONVENTIONS 13), so a panel connected to it cannot miss a lock. `changed` says the store
was changed by an action, so each panel refreshes what it shows (Anki's OpChanges, reduced
to one sentence). Panels never hold the store: they act through `session` (or, for the
people list and the integrity check, through `store`) and call control/ or runtime/.
While time travel shows the past, nothing may change: `past_changed` tells every panel to
turn its store-changing controls off (`offer`, with the reason in the tooltip), and `act`
refuses anyway. A store opened read-only (its file or folder cannot be written, issue 17
item 12) freezes the same controls for good, with its own reason (`frozen`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal

from engram.control.session import PersonSession
from engram.gui.main_window import MainWindow
from engram.gui.prompts import PromptHost
from engram.gui.tasks import Task, TaskContext, TaskRunner
from engram.gui.widgets import PAST_REASON, READ_ONLY_REASON
from engram.store.store import Store

T = TypeVar("T")


class Hub(QObject):
    """The open store, the person on screen, who is acting, and the signals panels hear."""

    session_changed = Signal()  # lock, unlock or another person: read `store` and `session`
    changed = Signal(str)  # an action changed the store; the text says what
    # Only the audit log gained a record (an export, an access report, a review copy): the
    # notes, people and conversations are as they were, so only what shows the log looks
    # again — reloading a 100,000-note table for it held the window (issue 17 item 8).
    recorded = Signal(str)
    reload_requested = Signal()  # nothing changed here, but look again (View > Refresh)
    failed = Signal(str)
    # Time travel on (True) or off, or another store (read-only or not) opened: the
    # store-changing controls follow `frozen`.
    past_changed = Signal(bool)

    def __init__(
        self, window: MainWindow, tasks: TaskRunner, prompts: PromptHost, actor: str | None
    ) -> None:
        super().__init__(window)
        self.w = window
        self.tasks = tasks
        self.prompts = prompts
        self.store: Store | None = None
        self.session: PersonSession | None = None
        self.preset_actor = actor
        self.actor: str | None = actor
        self.generation = 0  # moves on every lock, unlock and change of person
        self.store_generation = 0  # moves on every lock and unlock
        window.filters.time_travel.toggled.connect(self.past_changed.emit)

    # ---- time travel --------------------------------------------------------------------

    @property
    def past(self) -> bool:
        """Whether time travel shows the past: then nothing in the store may change."""
        return self.w.filters.time_travel.isChecked()

    @property
    def read_only(self) -> bool:
        """Whether the open store was opened read-only: then nothing in it may change."""
        return self.store is not None and self.store.read_only

    @property
    def frozen(self) -> str:
        """Why no change may be made now ("" when one may): what `offer` disables with."""
        if self.read_only:
            return READ_ONLY_REASON
        return PAST_REASON if self.past else ""

    def writable(self) -> bool:
        """Whether a change may be made now; if not, says why and is False (for an action
        reached however its control was disabled)."""
        if self.frozen:
            self.status(self.frozen, 8000)
            return False
        return True

    # ---- the session --------------------------------------------------------------------

    def set_store(self, store: Store | None) -> None:
        """A store was unlocked (or, with None, locked): every panel starts over."""
        self.store = store
        self.session = None
        if store is None:
            self.actor = self.preset_actor
        self.store_generation += 1
        self._announce()
        self.past_changed.emit(self.past)  # a read-only store freezes what the past does

    def set_session(self, session: PersonSession | None) -> None:
        """Another person is on screen (None: nobody, e.g. after an erase)."""
        self.session = session
        self._announce()

    def _announce(self) -> None:
        # Whatever is still on its way belongs to the previous session: drop it on arrival.
        self.generation += 1
        self.session_changed.emit()

    def current(self, generation: int, *, store_wide: bool = False) -> bool:
        """Whether nothing was locked, unlocked or switched since `generation` (with
        `store_wide`, a store generation: only a lock or unlock since then counts)."""
        return generation == (self.store_generation if store_wide else self.generation)

    # ---- background work ----------------------------------------------------------------

    def run(
        self,
        work: Callable[[TaskContext], Any],
        done: Callable[[Any], None] | None = None,
        on_error: Callable[[str], None] | None = None,
        *,
        store_wide: bool = False,
        background: bool = False,
        job: str | None = None,
        on_cancel: Callable[[], None] | None = None,
        changes: bool = False,
    ) -> Task:
        """Run work for the current session only: results arriving after a lock or a change
        of person are dropped, so nothing decrypted reappears where it does not belong.
        Work about the whole store (`store_wide`) survives a change of person; `background`
        work (a count on a tab label) waits behind what the person is waiting for. A long
        `job` (its title) runs in the jobs lane, beside what the person is waiting for, and
        shows in the jobs strip with its progress and Cancel (`on_cancel` then runs), unless
        it `changes` the store: a change is never cancelled part-way."""
        generation = self.store_generation if store_wide else self.generation

        def deliver(result: Any) -> None:
            if self.current(generation, store_wide=store_wide) and done is not None:
                done(result)

        def fail(message: str) -> None:
            if self.current(generation, store_wide=store_wide):
                (on_error or self.fail)(message)

        if job is not None:
            return self.tasks.start_job(
                job, work, deliver, fail, on_cancel, cancellable=not changes
            )
        return self.tasks.run(work, deliver, fail, priority=-1 if background else 0)

    def act(
        self,
        work: Callable[[], T],
        what: str | Callable[[T], str],
        done: Callable[[T], None] | None = None,
        on_error: Callable[[str], None] | None = None,
        *,
        job: str | None = None,
    ) -> Task | None:
        """Run one change off the UI thread; then say what changed, and every panel
        refreshes from `changed`. Never in the past (None: nothing was run). A long change
        (`job`: its title, e.g. learning) runs in the jobs lane."""
        if not self.writable():
            return None

        def finished(result: T) -> None:
            message = what(result) if callable(what) else what
            if done is not None:
                done(result)
            # The change is saved; what lagged after the commit (a checkpoint that could
            # not be rewritten) is said beside it, never as a failure (issue 15 item 6).
            lagging = self.store.take_warnings() if self.store is not None else []
            self.status(" ".join([message, *lagging]), 20_000 if lagging else 10_000)
            self.changed.emit(message)

        return self.run(lambda _: work(), finished, on_error, job=job, changes=True)

    # ---- asking the person --------------------------------------------------------------

    def ask(
        self, question: Callable[[PromptHost], T | None], cancelled: str | None = None
    ) -> T | None:
        """Ask through the dialog host. None when cancelled — and when a lock, an unlock or
        another person came while the dialog was open: the action it was for must not run,
        whatever the dialog answered. A cancel says so in the status bar (`cancelled`: what
        did not happen), so Esc or a mistaken Return is never silent."""
        generation = self.generation
        answer = question(self.prompts)
        if not self.current(generation):
            return None
        if answer is None and cancelled:
            self.status(f"Cancelled: {cancelled}", 8000)
        return answer

    # ---- telling the person -------------------------------------------------------------

    def status(self, message: str, ms: int = 6000) -> None:
        """A passing message in the status bar."""
        self.w.statusBar().showMessage(message, ms)

    def fail(self, message: str) -> None:
        """Say what went wrong, in the status bar and a message box."""
        self.w.statusBar().showMessage(message, 10_000)
        self.prompts.error(message)
        self.failed.emit(message)
