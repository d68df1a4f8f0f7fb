"""GUI fixtures: a demo store, the real window and controller, answers instead of dialogs."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox, QWidget

from engram.control.demo import build_demo
from engram.gui.add_dialogs import NoteToAdd, SourceChoice
from engram.gui.controller import InspectorController
from engram.gui.idle_lock import IdleLock
from engram.gui.keyring_probe import KeyringProbe
from engram.gui.main_window import MainWindow
from engram.gui.new_store_dialog import NewStoreSecret
from engram.model.scope import Scope
from engram.store import crypto
from tests.conftest import PASSPHRASE

SIGNAL_TIMEOUT = 10_000
STUCK_S = 5.0  # a modal dialog nobody could answer is rejected after this, and reported


@dataclass
class FakePrompts:
    """Answers the controller's questions the way a test says; records what it was shown."""

    text: str | None = None
    scope: Scope | None = None
    reason: str | None = ""
    typed: str | None = None
    actor: str | None = "staff:test"
    path: str | None = None
    errors: list[str] = field(default_factory=list)
    reports: list[tuple[str, str]] = field(default_factory=list)
    confirmations: list[tuple[str, str]] = field(default_factory=list)
    informed: list[tuple[str, str]] = field(default_factory=list)
    asked: list[tuple[str, Any]] = field(default_factory=list)
    closed_all: int = 0
    chosen_note: str | None = None  # the note link clicked in "what did the agent see?"
    yes: bool = False
    chosen: str | None = "me"  # a choice among a few ways forward (delete for whom)
    secret: NewStoreSecret | None = None
    review_secret: str | None = None  # a review copy's passphrase
    new_passphrase_answer: str | None = None  # File › Change passphrase…
    forget_answer: str | None = None  # File › Forget the key on this computer…
    person: str | None = None
    note: NoteToAdd | None = None
    sources: list[SourceChoice] = field(default_factory=list)
    backup: str | None = None  # File › Restore from backup…: the backup chosen
    restore_to: str | None = None  # ... where it goes
    backup_secret: str | None = None  # ... and the passphrase typed for it
    untick: set[str] = field(default_factory=set)  # a bulk preview's notes left alone
    phrase: str | None = None  # Note › Forget everything about…

    def edit_text(self, current: str) -> str | None:
        self.asked.append(("edit_text", current))
        return self.text

    def choose_scope(self, current: Scope, text: str = "") -> Scope | None:
        self.asked.append(("choose_scope", (current, text)))
        return self.scope

    def delete_reason(self, text: str) -> str | None:
        self.asked.append(("delete_reason", text))
        return self.reason

    def bulk_preview(self, preview: Any) -> Any:
        """The real preview dialog, its boxes unticked for the texts in `untick` as a
        person would; its answer unless `reason` is None (Cancel)."""
        from engram.gui.bulk_dialog import BulkPreviewDialog

        dialog = BulkPreviewDialog(preview)
        for i in range(dialog.list.count()):
            item = dialog.list.item(i)
            if item.text() in self.untick:
                item.setCheckState(Qt.CheckState.Unchecked)
        self.asked.append(("bulk_preview", (preview, dialog.apply.text())))
        answer = None if self.reason is None else (dialog.answer()[0], self.reason)
        dialog.deleteLater()
        return answer

    def phrase_to_forget(self) -> str | None:
        self.asked.append(("phrase_to_forget", None))
        return self.phrase

    def filter_name(self) -> str | None:
        self.asked.append(("filter_name", None))
        return self.phrase

    def typed_confirm(self, title: str, html: str, expected: str, action: str) -> str | None:
        self.confirmations.append((title, html))
        return self.typed

    def actor_id(self, person: str, one_person_store: bool) -> str | None:
        self.asked.append(("actor_id", (person, one_person_store)))
        return self.actor

    def excise_reason(self) -> str | None:
        return self.reason

    def reject_reason(self) -> str | None:
        return self.reason

    def save_path(self, suggested: str, caption: str) -> str | None:
        self.asked.append(("save_path", (suggested, caption)))
        return self.path

    def open_path(self, folder: str = "") -> str | None:
        self.asked.append(("open_path", folder))
        return self.path

    def backup_file(self, folder: str) -> str | None:
        self.asked.append(("backup_file", folder))
        return self.backup

    def memories_file(self, folder: str) -> str | None:
        self.asked.append(("memories_file", folder))
        return self.path

    def restore_target(self, suggested: str) -> str | None:
        self.asked.append(("restore_target", suggested))
        return self.restore_to

    def backup_passphrase(self, backup: str) -> str | None:
        self.asked.append(("backup_passphrase", backup))
        return self.backup_secret

    def show_turn_sight(self, sight: Any) -> str | None:
        self.asked.append(("show_turn_sight", sight))
        return self.chosen_note

    def new_store_path(self, folder: str) -> str | None:
        self.asked.append(("new_store_path", folder))
        return self.path

    def new_store_secret(self, path: str, probe: KeyringProbe) -> NewStoreSecret | None:
        self.asked.append(("new_store_secret", (path, probe.usable)))
        return self.secret

    def review_passphrase(self, path: str, new: bool) -> str | None:
        self.asked.append(("review_passphrase", (path, new)))
        return self.review_secret

    def new_passphrase(self, where: str, had_passphrase: bool) -> str | None:
        self.asked.append(("new_passphrase", (where, had_passphrase)))
        return self.new_passphrase_answer

    def forget_key_passphrase(self, where: str) -> str | None:
        self.asked.append(("forget_key_passphrase", where))
        return self.forget_answer

    def question(self, title: str, text: str, yes: str) -> bool:
        self.asked.append(("question", text))
        return self.yes

    def choose(self, title: str, text: str, choices: Sequence[tuple[str, str]]) -> str | None:
        self.asked.append(("choose", (text, list(choices))))
        return self.chosen

    def person_to_add(self) -> str | None:
        self.asked.append(("person_to_add", None))
        return self.person

    def note_to_add(self, sources: Sequence[SourceChoice]) -> NoteToAdd | None:
        self.sources = list(sources)
        return self.note

    def show_report(self, title: str, text: str) -> None:
        self.reports.append((title, text))

    def inform(self, title: str, text: str) -> None:
        self.informed.append((title, text))

    def show_about(self, html: str, icon: Any) -> None:
        self.informed.append(("About Engram", html))

    def show_shortcuts(self, rows: Any) -> None:
        self.asked.append(("show_shortcuts", list(rows)))

    def error(self, message: str) -> None:
        self.errors.append(message)

    def close_all(self) -> None:
        self.closed_all += 1


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.engram"
    build_demo(str(path), passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    return path


@pytest.fixture
def demo_path(demo_template: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store for one test."""
    target = tmp_path / "demo.engram"
    shutil.copy(demo_template, target)
    checkpoint = demo_template.with_name(demo_template.name + ".checkpoint")
    shutil.copy(checkpoint, target.with_name(target.name + ".checkpoint"))
    return target


@dataclass
class Inspector:
    """The window under test."""

    window: MainWindow
    controller: InspectorController
    prompts: FakePrompts
    clock: list[float]


def _inspector(
    qtbot: Any, tmp_path: Path, prompts: FakePrompts | None, actor: str | None
) -> Iterator[Inspector]:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    clock = [0.0]
    idle = IdleLock(minutes=5, clock=lambda: clock[0], check_every_ms=20)
    window = MainWindow()
    qtbot.addWidget(window)
    controller = InspectorController(
        window, prompts=prompts, settings=settings, idle=idle, actor=actor
    )
    window.show()
    window.activateWindow()
    yield Inspector(window, controller, prompts or FakePrompts(), clock)
    controller.lock("test over")


@pytest.fixture
def inspector(qtbot: Any, tmp_path: Path) -> Iterator[Inspector]:
    """The window with a test's answers instead of dialogs."""
    yield from _inspector(qtbot, tmp_path, FakePrompts(), None)


@pytest.fixture
def real_inspector(qtbot: Any, tmp_path: Path) -> Iterator[Inspector]:
    """The window with its real dialogs (answer them with `Modals`), acting as staff:test.
    Its `prompts` field is an unused FakePrompts."""
    yield from _inspector(qtbot, tmp_path, None, "staff:test")


@pytest.fixture
def nobody_inspector(qtbot: Any, tmp_path: Path) -> Iterator[Inspector]:
    """The window with its real dialogs, and nobody preset as acting (it asks)."""
    yield from _inspector(qtbot, tmp_path, None, None)


@pytest.fixture
def modals(qtbot: Any) -> Iterator[Modals]:
    """Answers real modal dialogs as they open."""
    answering = Modals()
    yield answering
    answering.timer.stop()


class Modals:
    """A real modal dialog blocks in exec(); this answers each one as it becomes the active
    modal widget, with the next handler given to `expect`. One that nobody expected is
    recorded in `unexpected` (with its text) and rejected."""

    def __init__(self) -> None:
        self.handlers: list[Callable[[QWidget], None]] = []
        self.seen: list[QWidget] = []
        self.unexpected: list[str] = []
        self.waiting: dict[int, float] = {}
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._poll)
        self.timer.start()

    def expect(self, handler: Callable[[QWidget], None]) -> None:
        """Answer the next dialog with `handler`."""
        self.handlers.append(handler)

    def _poll(self) -> None:
        modal = QApplication.activeModalWidget()
        if modal is None:
            return
        if any(modal is seen for seen in self.seen):  # answered, yet still open?
            since = self.waiting.setdefault(-id(modal), time.monotonic())
            if time.monotonic() - since > STUCK_S and isinstance(modal, QDialog):
                self.unexpected.append(f"{type(modal).__name__} stayed open after its answer")
                modal.reject()
            return
        if QApplication.activeWindow() is not modal:  # not yet in front: wait, but not forever
            waited = self.waiting.setdefault(id(modal), time.monotonic())
            if time.monotonic() - waited > STUCK_S and isinstance(modal, QDialog):
                self.seen.append(modal)
                self.unexpected.append(f"{type(modal).__name__} never came to the front")
                modal.reject()
            return
        self.seen.append(modal)
        if self.handlers:
            self.handlers.pop(0)(modal)
            return
        text = modal.text() if isinstance(modal, QMessageBox) else modal.windowTitle()
        self.unexpected.append(f"{type(modal).__name__}: {text}")
        if isinstance(modal, QDialog):
            modal.reject()


def unlock(qtbot: Any, inspector: Inspector, path: Path, person: str = "maya") -> None:
    """Type the passphrase like a person would and wait until the person's notes show."""
    page = inspector.window.unlock_page
    page.set_recent([], str(path))  # as Browse… does
    qtbot.keyClicks(page.passphrase, PASSPHRASE)
    with qtbot.waitSignal(inspector.controller.person_opened, timeout=SIGNAL_TIMEOUT):
        qtbot.mouseClick(page.unlock_button, _left())
    wait_idle(qtbot, inspector)
    if inspector.controller.session and inspector.controller.session.person != person:
        open_person(qtbot, inspector, person)


def open_person(qtbot: Any, inspector: Inspector, person: str) -> None:
    """Click a person in the people list."""
    people = inspector.window.people
    for row in range(people.count()):
        if people.item(row).text().startswith(person + "\n"):
            with qtbot.waitSignal(inspector.controller.person_opened, timeout=SIGNAL_TIMEOUT):
                people.setCurrentRow(row)
            wait_idle(qtbot, inspector)
            return
    raise AssertionError(f"{person} is not listed")


def show_tab(qtbot: Any, inspector: Inspector, tab: Any) -> None:
    """Click a tab and wait for it to load (tabs out of sight load when shown)."""
    inspector.window.tabs.setCurrentWidget(tab)
    wait_idle(qtbot, inspector)


def wait_idle(qtbot: Any, inspector: Inspector) -> None:
    """Wait until no background task is queued or running (and its result delivered)."""
    qtbot.waitUntil(lambda: not inspector.controller.tasks.busy, timeout=SIGNAL_TIMEOUT)


@contextmanager
def long_job(inspector: Inspector) -> Iterator[threading.Event]:
    """Work that holds the inspector's interactive worker until the test releases it (or
    the block ends), as a slow load does: whatever is asked meanwhile waits. (Long jobs
    such as verify run beside it in the jobs lane: tests/gui/test_issue17_workers.py.)"""
    started, release = threading.Event(), threading.Event()

    def job(_ctx: Any) -> None:
        started.set()
        release.wait(SIGNAL_TIMEOUT / 1000)

    inspector.controller.tasks.run(job)
    assert started.wait(SIGNAL_TIMEOUT / 1000), "the long job never started"
    try:
        yield release
    finally:
        release.set()


def note_texts(inspector: Inspector) -> list[str]:
    """The notes table's Text column, top to bottom."""
    model = inspector.window.notes_model
    return [str(model.index(r, 0).data()) for r in range(model.rowCount())]


def select_note(qtbot: Any, inspector: Inspector, text: str) -> str:
    """Select the note showing `text`, wait for its detail; returns its id."""
    row = note_texts(inspector).index(text)
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT) as got:
        inspector.window.table.selectRow(row)
    wait_idle(qtbot, inspector)
    return str(got.args[0])


def demo_exchange(inspector: Inspector, first_words: str) -> tuple[str, str]:
    """The demo conversation starting with `first_words`, and its first assistant turn."""
    from engram.model.conversation import EntryKind
    from engram.runtime.conversations import conversations_of, turns

    store = inspector.controller.store
    assert store is not None
    for info in conversations_of(store, "maya"):
        said = turns(store, info.id)
        if said and (said[0][1] or "").startswith(first_words):
            reply = next(e.ref for e, _ in said if e.kind is EntryKind.ASSISTANT)
            assert reply is not None
            return info.id, reply
    raise AssertionError(f"no conversation starts with {first_words!r}")


def open_transcript(qtbot: Any, inspector: Inspector, conversation: str) -> None:
    """Show the Conversations tab with `conversation`'s transcript loaded."""
    from engram.gui.conversations_panel import CONVERSATION_ROLE

    show_tab(qtbot, inspector, inspector.window.conversations)
    panel = inspector.window.conversations
    row = next(
        r
        for r in range(panel.list.count())
        if panel.list.item(r).data(CONVERSATION_ROLE) == conversation
    )
    with qtbot.waitSignal(inspector.controller.transcript_shown, timeout=SIGNAL_TIMEOUT):
        panel.list.setCurrentRow(row)
    wait_idle(qtbot, inspector)


def _left() -> Any:
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton
