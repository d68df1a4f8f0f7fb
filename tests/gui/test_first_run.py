"""Issue 8, "First run and empty stores": File > New store… (item 9), the first-run welcome
(item 10), Add person… / Add note… and the empty state (item 11). Real widgets, offscreen."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import keyring
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QLineEdit, QMessageBox, QWidget

from engram.control.demo import build_demo
from engram.gui.add_dialogs import AddNoteDialog, AddPersonDialog, NoteToAdd
from engram.gui.dialogs import QuestionDialog
from engram.gui.new_store_dialog import MINIMUM_SCORE, NewStoreDialog, passphrase_strength
from engram.model.events import EventType
from engram.model.ids import person_id
from engram.model.scope import Kind, Scope
from engram.store import journal
from engram.store.location import stores_folder
from engram.store.store import Store
from tests.conftest import PASSPHRASE, NoKeyring
from tests.gui.conftest import (
    SIGNAL_TIMEOUT,
    Inspector,
    Modals,
    open_person,
    unlock,
    wait_idle,
)

STRONG = "quiet lantern orbit mosaic"


def _left() -> Any:
    return Qt.MouseButton.LeftButton


def _type_file_name(dialog: QFileDialog, name: str) -> None:
    """Type a file name as a person would (selectFile keeps a name already suggested)."""
    field = dialog.findChild(QLineEdit, "fileNameEdit")
    assert field is not None
    field.setText(name)
    dialog.accept()


def _events(path: Path, person: str) -> list[tuple[EventType, str]]:
    store = Store.open(str(path), passphrase=PASSPHRASE)
    try:
        with store.read() as conn:
            return [(e.type, e.actor) for e in journal.events(conn, person_id(person))]
    finally:
        store.close()


# ---- item 9: File > New store… ------------------------------------------------------------


def test_item9_passphrase_strength_has_a_minimum() -> None:
    assert not passphrase_strength("password1").enough
    assert not passphrase_strength("Lyon2026").enough
    assert passphrase_strength(STRONG).enough
    assert passphrase_strength(STRONG).score >= MINIMUM_SCORE


def test_item9_new_store_through_its_real_dialogs(
    qtbot: Any, real_inspector: Inspector, modals: Modals
) -> None:
    """The folder is asked for (never made silently), the save dialog opens in the data
    folder, the passphrase is typed twice past a minimum, and success is confirmed."""
    folder = stores_folder()
    assert not folder.exists()
    target = folder / "mine.engram"
    seen: dict[str, Any] = {}

    def create_folder(dialog: QWidget) -> None:
        assert isinstance(dialog, QuestionDialog)
        seen["question"] = dialog.text.text()
        assert dialog.buttons.button(dialog.buttons.StandardButton.Cancel).isDefault()
        qtbot.mouseClick(dialog.yes, _left())

    def save(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        seen["folder"] = dialog.directory().absolutePath()
        _type_file_name(dialog, target.name)

    def passphrase(dialog: QWidget) -> None:
        assert isinstance(dialog, NewStoreDialog)
        qtbot.keyClicks(dialog.passphrase, "password1")
        qtbot.keyClicks(dialog.again, "password1")
        seen["weak"] = (dialog.create_button.isEnabled(), dialog.strength.text())
        assert "score 3" in dialog.passphrase.toolTip()  # why the minimum, in words
        dialog.passphrase.clear()
        dialog.again.clear()
        qtbot.keyClicks(dialog.passphrase, STRONG)
        qtbot.keyClicks(dialog.again, STRONG[:-1])
        seen["differ"] = dialog.create_button.isEnabled()
        qtbot.keyClicks(dialog.again, STRONG[-1])
        qtbot.waitUntil(lambda: dialog.remember.isEnabled(), timeout=SIGNAL_TIMEOUT)
        dialog.remember.setChecked(True)
        assert dialog.create_button.isEnabled()
        qtbot.mouseClick(dialog.create_button, _left())

    def confirmed(box: QWidget) -> None:
        assert isinstance(box, QMessageBox)
        seen["confirmed"] = box.text()
        box.accept()

    for handler in (create_folder, save, passphrase, confirmed):
        modals.expect(handler)
    inspector = real_inspector
    with qtbot.waitSignal(inspector.controller.unlocked, timeout=SIGNAL_TIMEOUT):
        inspector.window.new_store_action.trigger()
    qtbot.waitUntil(lambda: "confirmed" in seen, timeout=SIGNAL_TIMEOUT)
    assert modals.unexpected == []
    assert str(folder) in seen["question"]
    assert seen["folder"] == str(folder)
    assert seen["weak"][0] is False and "weak" in seen["weak"][1]
    assert seen["differ"] is False
    assert str(target) in seen["confirmed"] and "remembered" in seen["confirmed"]
    assert inspector.controller.store is not None and target.exists()
    inspector.controller.lock()
    Store.open(str(target)).close()  # remembered in the keyring
    Store.open(str(target), passphrase=STRONG).close()  # and behind the passphrase


def test_item9_creating_runs_off_the_ui_thread_and_refuses_a_missing_folder_unasked(
    qtbot: Any, inspector: Inspector, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts = inspector.prompts
    stores_folder().mkdir(parents=True)
    prompts.path = str(tmp_path / "elsewhere" / "new.engram")
    prompts.yes = False
    inspector.window.new_store_action.trigger()
    assert prompts.errors == [
        f"No store was created: the folder {tmp_path / 'elsewhere'} does not exist."
    ]
    assert not (tmp_path / "elsewhere").exists()
    assert not any(kind == "new_store_secret" for kind, _ in prompts.asked)

    threads: list[str] = []
    real_create = Store.create

    def create(*args: Any, **kwargs: Any) -> Store:
        threads.append(threading.current_thread().name)
        return real_create(*args, **kwargs)

    monkeypatch.setattr(Store, "create", create)
    from engram.gui.new_store_dialog import NewStoreSecret

    prompts.path = str(stores_folder() / "ok.engram")
    prompts.secret = NewStoreSecret(STRONG, False)
    with qtbot.waitSignal(inspector.controller.unlocked, timeout=SIGNAL_TIMEOUT):
        inspector.window.new_store_action.trigger()
    assert threads and threads[0] != threading.main_thread().name
    assert prompts.informed[-1][0] == "Store created"


def test_item9_without_a_keyring_remember_is_greyed_with_the_reason(
    qtbot: Any, real_inspector: Inspector, modals: Modals
) -> None:
    keyring.set_keyring(NoKeyring())
    stores_folder().mkdir(parents=True)
    seen: dict[str, Any] = {}

    def save(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        _type_file_name(dialog, "x.engram")

    def passphrase(dialog: QWidget) -> None:
        assert isinstance(dialog, NewStoreDialog)
        qtbot.waitUntil(lambda: dialog.probe.usable is False, timeout=SIGNAL_TIMEOUT)
        seen["enabled"] = dialog.remember.isEnabled()
        seen["reason"] = dialog.keyring_reason.text()
        seen["tip"] = dialog.remember.toolTip()
        dialog.reject()

    modals.expect(save)
    modals.expect(passphrase)
    real_inspector.window.new_store_action.trigger()
    qtbot.waitUntil(lambda: "reason" in seen, timeout=SIGNAL_TIMEOUT)
    assert seen["enabled"] is False
    assert "no usable OS keyring" in seen["reason"] and seen["tip"] == seen["reason"]
    page = real_inspector.window.unlock_page
    assert not page.remember.isEnabled() and "no usable OS keyring" in page.remember.toolTip()
    assert modals.unexpected == []


def test_item9_remember_without_a_keyring_still_opens_with_the_right_passphrase(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    keyring.set_keyring(NoKeyring())
    page = inspector.window.unlock_page
    page.set_recent([], str(demo_path))
    page.remember.setChecked(True)  # ticked before the keyring was known to be missing
    qtbot.keyClicks(page.passphrase, PASSPHRASE)
    with qtbot.waitSignal(inspector.controller.unlocked, timeout=SIGNAL_TIMEOUT):
        qtbot.mouseClick(page.unlock_button, _left())
    wait_idle(qtbot, inspector)
    assert inspector.controller.store is not None
    ((title, text),) = inspector.prompts.informed
    assert title == "Not remembered" and "no usable OS keyring" in text


# ---- item 10: first run ---------------------------------------------------------------------


def test_item10_first_run_offers_open_create_and_demo(qtbot: Any, inspector: Inspector) -> None:
    page = inspector.window.unlock_page
    assert page.first_run
    for button in (page.welcome_open, page.welcome_create, page.welcome_demo):
        assert button.isVisible() and button.isEnabled()
    assert not page.form.isVisible()  # no empty store field to puzzle over
    stores_folder().mkdir(parents=True)
    qtbot.mouseClick(page.welcome_open, _left())
    assert ("open_path", str(stores_folder())) in inspector.prompts.asked
    inspector.prompts.path = None
    qtbot.mouseClick(page.welcome_create, _left())
    assert ("new_store_path", str(stores_folder())) in inspector.prompts.asked


def test_item10_open_the_demo_builds_it_with_progress_then_opens_it(
    qtbot: Any, inspector: Inspector, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = inspector.window.unlock_page
    said: list[str] = []
    real = page.message.setText
    monkeypatch.setattr(page.message, "setText", lambda text: (said.append(text), real(text)))
    inspector.prompts.yes = False  # the data folder is Engram's own: nothing is asked
    assert not stores_folder().exists()
    # Found under openbox: the news came while the first person opened, so "Who is
    # acting?" stacked over it. It now comes once a person is on screen.
    informed_with_person: list[bool] = []
    real_inform = inspector.prompts.inform

    def inform(title: str, text: str) -> None:
        informed_with_person.append(inspector.controller.hub.session is not None)
        real_inform(title, text)

    monkeypatch.setattr(inspector.prompts, "inform", inform)
    with qtbot.waitSignal(inspector.controller.person_opened, timeout=60_000):
        qtbot.mouseClick(page.welcome_demo, _left())
    wait_idle(qtbot, inspector)
    assert not [q for q in inspector.prompts.asked if q[0] == "question"]
    assert (stores_folder() / "demo.engram").exists()
    assert stores_folder().stat().st_mode & 0o077 == 0
    assert inspector.window.people.count() == 3
    assert any("conversation 3 of 9" in text for text in said)
    qtbot.waitUntil(lambda: bool(informed_with_person), timeout=SIGNAL_TIMEOUT)
    assert inspector.prompts.informed[-1][0] == "Demo store"
    assert informed_with_person == [True]
    inspector.controller.lock()
    assert not page.first_run  # the demo is a recent store now
    with qtbot.waitSignal(inspector.controller.unlocked, timeout=SIGNAL_TIMEOUT):
        inspector.controller.store_lock.open_demo()  # there already: opened, not rebuilt
    inspector.controller.lock()
    # The run command and the CLI open the same file with the same public passphrase.
    Store.open(str(stores_folder() / "demo.engram"), passphrase="demo").close()


def test_item10_open_the_demo_opens_the_one_the_run_command_built(
    qtbot: Any, inspector: Inspector
) -> None:
    """`bash packaging/run.sh` builds ~/.local/share/engram/demo.engram with the passphrase
    `demo`; the inspector's "Open the demo" must open that very store, not refuse it as a
    wrong passphrase (it used another one before)."""
    stores_folder().mkdir(parents=True)
    build_demo(str(stores_folder() / "demo.engram"), passphrase="demo")
    page = inspector.window.unlock_page
    with qtbot.waitSignal(inspector.controller.person_opened, timeout=60_000):
        qtbot.mouseClick(page.welcome_demo, _left())
    wait_idle(qtbot, inspector)
    assert inspector.window.people.count() == 3


# ---- item 11: adding, and the empty state --------------------------------------------------


def test_item11_empty_store_offers_add_person_then_add_note(
    qtbot: Any, real_inspector: Inspector, modals: Modals, tmp_path: Path
) -> None:
    path = tmp_path / "empty.engram"
    Store.create(str(path), passphrase=PASSPHRASE).close()
    inspector, window = real_inspector, real_inspector.window
    page = window.unlock_page
    page.set_recent([], str(path))
    qtbot.keyClicks(page.passphrase, PASSPHRASE)
    with qtbot.waitSignal(inspector.controller.unlocked, timeout=SIGNAL_TIMEOUT):
        qtbot.mouseClick(page.unlock_button, _left())
    wait_idle(qtbot, inspector)
    empty = window.empty_state
    assert empty.isVisible() and empty.add_person.isVisible() and not window.table.isVisible()
    assert "empty" in empty.message.text()

    def add_person(dialog: QWidget) -> None:
        assert isinstance(dialog, AddPersonDialog)
        qtbot.keyClicks(dialog.field, "zoe bad")
        assert not dialog.ok.isEnabled() and "not a valid person id" in dialog.problem.text()
        dialog.field.clear()
        qtbot.keyClicks(dialog.field, "zoe")
        qtbot.mouseClick(dialog.ok, _left())

    modals.expect(add_person)
    with qtbot.waitSignal(inspector.controller.person_opened, timeout=SIGNAL_TIMEOUT):
        qtbot.mouseClick(empty.add_person, _left())
    wait_idle(qtbot, inspector)
    assert empty.isVisible() and empty.add_note.isVisible() and "zoe" in empty.message.text()

    def add_note(dialog: QWidget) -> None:
        assert isinstance(dialog, AddNoteDialog)
        assert not dialog.ok.isEnabled()
        lines = [b.text() for b in dialog.scope_buttons.values()]
        assert all(" — " in line and len(line) < 100 for line in lines)
        qtbot.keyClicks(dialog.text, "Plays the cello.")
        dialog.kind.setCurrentIndex(list(Kind).index(Kind.PREFERENCE))
        dialog.scope_buttons[Scope.PORTABLE].click()
        qtbot.mouseClick(dialog.ok, _left())

    modals.expect(add_note)
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        qtbot.mouseClick(empty.add_note, _left())
    qtbot.waitUntil(lambda: window.notes_model.rowCount() == 1, timeout=SIGNAL_TIMEOUT)
    wait_idle(qtbot, inspector)
    assert not empty.isVisible() and window.table.isVisible()
    assert modals.unexpected == []
    inspector.controller.lock()
    assert _events(path, "zoe") == [
        (EventType.PERSON_CREATED, "staff:test"),
        (EventType.NOTE_ADDED, "staff:test"),
    ]


def test_item11_add_note_names_conversations_by_date_people_and_words(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    prompts = inspector.prompts
    assert inspector.window.add_note_action.isEnabled()
    inspector.window.add_note_action.trigger()
    qtbot.waitUntil(lambda: bool(prompts.sources), timeout=SIGNAL_TIMEOUT)
    labels = [s.label for s in prompts.sources]
    assert all(label.count(" · ") >= 2 and "c_" not in label for label in labels)
    assert any("maya" in label and "Bonjour" in label for label in labels)
    source = prompts.sources[0]
    prompts.note = NoteToAdd("Prefers trains.", Kind.PREFERENCE, Scope.DIRECT, source.conversation)
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        inspector.window.add_note_action.trigger()
    wait_idle(qtbot, inspector)
    session = inspector.controller.session
    assert session is not None
    from engram.control import notes

    (added,) = [v for v in notes.list_notes(session) if v.text == "Prefers trains."]
    assert [s.conversation for s in added.note.sources] == [source.conversation]
    assert added.note.scope is Scope.DIRECT


def test_item11_add_person_is_disabled_while_locked_and_add_note_without_a_person(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    assert not window.add_person_action.isEnabled() and not window.add_note_action.isEnabled()
    unlock(qtbot, inspector, demo_path)
    assert window.add_person_action.isEnabled()
    open_person(qtbot, inspector, "ines")
    window.filters.time_travel.setChecked(True)
    assert not window.add_note_action.isEnabled()  # the past cannot be added to
