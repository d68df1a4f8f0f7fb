"""Issue 8, "Safety": the inspector is safe for the people it is for. One test (or more) per
numbered item, each driving the real window offscreen; real dialogs are answered by
`Modals` as they open."""

from __future__ import annotations

import sqlite3
import stat
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QDateTime, Qt, QTimeZone
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFileDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QWidget,
)

from engram.control import candidates
from engram.control.session import PersonSession, check_actor
from engram.gui.dialogs import (
    ActorDialog,
    DeleteNoteDialog,
    EditTextDialog,
    TypedConfirmDialog,
    documents_folder,
)
from engram.model.errors import InvalidInput
from engram.model.ids import PersonId
from engram.model.scope import Scope
from engram.runtime.conversations import append_turn, conversations_of
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.gui.conftest import (
    SIGNAL_TIMEOUT,
    Inspector,
    Modals,
    note_texts,
    select_note,
    show_tab,
    unlock,
    wait_idle,
)

CTRL = Qt.KeyboardModifier.ControlModifier
APP_NAME = "Engram Inspector"


def _journal(path: Path, person: str = "maya") -> list[str]:
    with sqlite3.connect(path) as raw:
        rows = raw.execute("select type from journal where person=? order by seq", (person,))
        return [r[0] for r in rows]


def _open_dialogs() -> list[QWidget]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QDialog) and w.isVisible()]


def _assert_locked_and_anonymous(inspector: Inspector, demo_path: Path) -> None:
    """Item 1's end state: nothing open, nothing named, the key gone."""
    window = inspector.window
    assert _open_dialogs() == []
    assert window.stack.currentWidget() is window.unlock_page
    assert window.windowTitle() == APP_NAME
    bar = " ".join(
        [window.statusBar().currentMessage()]
        + [label.text() for label in (window.store_label, window.actor_label)]
    )
    assert "maya" not in bar and str(demo_path) not in bar and "demo.engram" not in bar
    assert inspector.controller.store is None and inspector.controller.session is None


# ---- 1. Locking closes everything -------------------------------------------------------


def test_item1_lock_closes_open_edit_dialog(
    qtbot: Any, real_inspector: Inspector, demo_path: Path, modals: Modals
) -> None:
    """Ctrl+L above the Edit dialog closes it; pressing Save afterwards is impossible, and
    nothing is written, nor any "Something went wrong" shown."""
    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    select_note(qtbot, inspector, "Lives in Grenoble.")
    before = _journal(demo_path)
    shown: list[str] = []
    after_lock: list[bool] = []

    def edit_then_lock(dialog: QWidget) -> None:
        assert isinstance(dialog, EditTextDialog)
        shown.append(dialog.field.toPlainText())
        dialog.field.setPlainText("Lives in Lyon again.")
        qtbot.keyClick(dialog, Qt.Key.Key_L, CTRL)  # the lock shortcut, pressed in the dialog
        after_lock.append(dialog.isVisible())
        if dialog.isVisible():  # as today: it stayed above the lock screen; press Save
            dialog.accept()

    modals.expect(edit_then_lock)
    with qtbot.waitSignal(inspector.controller.locked, timeout=SIGNAL_TIMEOUT):
        inspector.window.edit_action.trigger()
    wait_idle(qtbot, inspector)
    qtbot.wait(50)
    assert shown == ["Lives in Grenoble."]
    assert after_lock == [False]
    assert modals.unexpected == []  # no "Something went wrong (AttributeError …)"
    assert _journal(demo_path) == before
    _assert_locked_and_anonymous(inspector, demo_path)


def _ask_with(route: str, inspector: Inspector, qtbot: Any) -> Callable[[QWidget], None]:
    """Lock the way `route` says while `dialog` is open."""

    def lock(dialog: QWidget) -> None:
        if route == "ctrl+l":
            qtbot.keyClick(dialog, Qt.Key.Key_L, CTRL)
        elif route == "idle":
            inspector.clock[0] += 10 * 60  # the idle check runs inside the dialog's loop
        else:
            inspector.window.quit_action.trigger()

    return lock


DIALOGS = (
    "edit text",
    "scope",
    "delete reason",
    "reject reason",
    "cascade preview",
    "typed erase confirmation",
    "erasure report",
    "export",
    "error message",
)


# Every dialog is locked over with Ctrl+L; the idle lock and quitting are tried on three.
CASES = [(which, "ctrl+l") for which in DIALOGS] + [
    (which, route)
    for which in ("edit text", "typed erase confirmation", "export")
    for route in ("idle", "quit")
]


@pytest.mark.parametrize(("which", "route"), CASES)
def test_item1_lock_closes_every_dialog_and_the_action_does_nothing(
    qtbot: Any,
    real_inspector: Inspector,
    demo_path: Path,
    modals: Modals,
    which: str,
    route: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl+L, the idle lock and quitting close whichever dialog is open (and any box
    above it); the action it belonged to does nothing afterwards, whatever it was told."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    inspector = real_inspector
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    lock = _ask_with(route, inspector, qtbot)
    trigger: Callable[[], None]
    if which in ("edit text", "scope", "delete reason"):
        select_note(qtbot, inspector, "Lives in Grenoble.")
        trigger = {
            "edit text": window.edit_action.trigger,
            "scope": window.scope_action.trigger,
            "delete reason": window.delete_action.trigger,
        }[which]
    elif which == "reject reason":
        show_tab(qtbot, inspector, window.candidates)
        window.candidates.table.selectRow(0)
        wait_idle(qtbot, inspector)
        trigger = window.candidates.reject_button.click
    elif which == "cascade preview":
        show_tab(qtbot, inspector, window.conversations)
        window.conversations.list.setCurrentRow(0)
        wait_idle(qtbot, inspector)
        trigger = window.delete_conversation_action.trigger
    elif which in ("typed erase confirmation", "erasure report"):
        trigger = window.erase_action.trigger
    elif which == "export":
        trigger = window.export_action.trigger
    else:  # an error box: a candidate decided elsewhere first
        show_tab(qtbot, inspector, window.candidates)
        window.candidates.table.selectRow(0)
        wait_idle(qtbot, inspector)
        seen = window.candidates.current()
        assert seen is not None
        _decide_elsewhere(demo_path, seen)
        trigger = window.candidates.approve_button.click
    before = _journal(demo_path)
    shown: list[str] = []

    def look_then_lock(dialog: QWidget) -> None:
        shown.append(type(dialog).__name__)
        field = dialog.focusWidget()
        if isinstance(field, QLineEdit | QPlainTextEdit):
            qtbot.keyClicks(field, "typed before the lock")
        lock(dialog)

    if which == "erasure report":
        modals.expect(lambda d: _type_and_accept(d, "maya"))
        before = None  # the erase itself happens; its report is what the lock closes
    modals.expect(look_then_lock)
    with qtbot.waitSignal(inspector.controller.locked, timeout=SIGNAL_TIMEOUT):
        trigger()
    wait_idle(qtbot, inspector)
    qtbot.wait(50)
    expected = {
        "edit text": "EditTextDialog",
        "scope": "QInputDialog",
        "delete reason": "DeleteNoteDialog",
        "reject reason": "QInputDialog",
        "cascade preview": "TypedConfirmDialog",
        "typed erase confirmation": "TypedConfirmDialog",
        "erasure report": "ReportDialog",
        "export": "QFileDialog",
        "error message": "QMessageBox",
    }[which]
    assert shown == [expected]
    assert modals.unexpected == []
    if before is not None:
        assert _journal(demo_path) == before
    assert list((tmp_path / "home").rglob("*.json")) == []
    _assert_locked_and_anonymous(inspector, demo_path)


def _type_and_accept(dialog: QWidget, words: str) -> None:
    assert isinstance(dialog, TypedConfirmDialog)
    dialog.field.setText(words)
    dialog.action.click()


def _decide_elsewhere(path: Path, candidate: dict[str, Any]) -> None:
    other = Store.open(str(path), passphrase=PASSPHRASE)  # a second reviewer, elsewhere
    try:
        staff = PersonSession(other, PersonId("maya"), "staff:lee")
        candidates.approve(staff, candidate["id"], candidate["revision"])
    finally:
        other.close()


def test_item1_an_action_rechecks_the_session_after_its_dialog_returns(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    """Even if a dialog answered after a lock (a host that could not close it), the action
    it was for does nothing: the session is checked again when the dialog returns."""
    unlock(qtbot, inspector, demo_path)
    select_note(qtbot, inspector, "Lives in Grenoble.")
    before = _journal(demo_path)

    def answer_after_a_lock(current: str) -> str:
        inspector.controller.lock("Locked.")
        return "Lives in Lyon again."

    inspector.prompts.edit_text = answer_after_a_lock  # type: ignore[method-assign]
    inspector.window.detail.edit_button.click()
    wait_idle(qtbot, inspector)
    qtbot.wait(50)
    assert inspector.prompts.errors == []
    assert _journal(demo_path) == before
    assert inspector.controller.session is None


# ---- 2. Actions act on what the user sees -----------------------------------------------


def test_item2_note_shortcuts_do_nothing_on_another_tab(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    """On the Candidates tab, Del, F2 and Ctrl+Shift+S do not reach the note still selected
    on the hidden Notes tab; back on the table they do (CONVENTIONS 14)."""
    unlock(qtbot, inspector, demo_path)
    window = inspector.window
    select_note(qtbot, inspector, "Is vegetarian.")
    before = _journal(demo_path)
    inspector.prompts.asked.clear()  # who is acting was asked at unlock
    show_tab(qtbot, inspector, window.candidates)
    window.candidates.table.setFocus()
    for key, modifiers in (
        (Qt.Key.Key_Delete, Qt.KeyboardModifier.NoModifier),
        (Qt.Key.Key_F2, Qt.KeyboardModifier.NoModifier),
        (Qt.Key.Key_S, CTRL | Qt.KeyboardModifier.ShiftModifier),
    ):
        qtbot.keyClick(window.candidates.table, key, modifiers)
        qtbot.keyClick(window.candidates.table, Qt.Key.Key_Return)
    wait_idle(qtbot, inspector)
    assert inspector.prompts.asked == []
    assert _journal(demo_path) == before
    for action in (window.edit_action, window.scope_action, window.delete_action):
        assert not action.isEnabled()
    show_tab(qtbot, inspector, window.tabs.widget(0))
    window.table.setFocus()
    inspector.prompts.reason = None  # cancel
    qtbot.keyClick(window.table, Qt.Key.Key_Delete)
    assert inspector.prompts.asked == [("delete_reason", "Is vegetarian.")]
    assert _journal(demo_path) == before


def test_item2_actions_without_a_target_are_disabled(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    w = inspector.window
    note_actions = (w.edit_action, w.scope_action, w.delete_action)
    assert not any(a.isEnabled() for a in note_actions)  # no note chosen yet
    assert not w.detail.edit_button.isEnabled()
    select_note(qtbot, inspector, "Is vegetarian.")
    assert all(a.isEnabled() for a in note_actions)
    w.filters.status.setCurrentIndex(w.filters.status.findText("All intervals"))
    qtbot.waitUntil(lambda: "Lives in Lyon." in note_texts(inspector), timeout=SIGNAL_TIMEOUT)
    select_note(qtbot, inspector, "Lives in Lyon.")  # closed: there is nothing to change
    assert not any(a.isEnabled() for a in note_actions)
    assert not w.detail.edit_button.isEnabled()
    assert not w.delete_conversation_action.isEnabled()
    show_tab(qtbot, inspector, w.conversations)
    assert not w.delete_conversation_action.isEnabled()  # none selected
    w.conversations.list.setCurrentRow(0)
    assert w.delete_conversation_action.isEnabled()
    show_tab(qtbot, inspector, w.audit)
    assert not w.delete_conversation_action.isEnabled()  # out of sight
    for action in (w.export_action, w.erase_action, w.learn_action, w.verify_action):
        assert action.isEnabled()
    inspector.controller.lock()
    for action in (*note_actions, w.export_action, w.erase_action, w.verify_action):
        assert not action.isEnabled()


def test_item2_delete_shows_the_note_and_enter_cancels(
    qtbot: Any, real_inspector: Inspector, demo_path: Path, modals: Modals
) -> None:
    """The confirmation quotes the note; its default button is Cancel, so Enter (even
    after typing a reason) deletes nothing."""
    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    select_note(qtbot, inspector, "Is vegetarian.")
    before = _journal(demo_path)
    seen: list[tuple[str, bool]] = []

    def press_enter(dialog: QWidget) -> None:
        assert isinstance(dialog, DeleteNoteDialog)
        seen.append((dialog.note.text(), dialog.cancel.isDefault()))
        qtbot.keyClicks(dialog.reason, "not true")
        qtbot.keyClick(dialog.reason, Qt.Key.Key_Return)

    modals.expect(press_enter)
    inspector.window.table.setFocus()
    qtbot.keyClick(inspector.window.table, Qt.Key.Key_Delete)
    wait_idle(qtbot, inspector)
    assert seen == [("“Is vegetarian.”", True)]
    assert _journal(demo_path) == before
    assert modals.unexpected == []


# ---- 3. Focus -----------------------------------------------------------------------------


def test_item3_focus_after_unlock_is_on_the_people_list_not_the_passphrase(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    for _ in range(2):  # the first unlock, and after a lock
        page = window.unlock_page
        page.set_recent([], str(demo_path))
        qtbot.keyClicks(page.passphrase, PASSPHRASE)
        with qtbot.waitSignal(inspector.controller.person_opened, timeout=SIGNAL_TIMEOUT):
            qtbot.keyClick(page.passphrase, Qt.Key.Key_Return)
        wait_idle(qtbot, inspector)
        focused = QApplication.focusWidget()
        assert focused is window.people
        qtbot.keyClicks(focused, "sam")  # typing lands where the person looks
        assert page.passphrase.text() == ""
        inspector.controller.lock()


# ---- 4. Who is acting -------------------------------------------------------------------


def test_item4_actor_prompt_names_the_person_and_takes_only_staff_ids(
    qtbot: Any, nobody_inspector: Inspector, demo_path: Path, modals: Modals
) -> None:
    inspector = nobody_inspector  # real dialogs, and nobody said who is acting
    asked: list[tuple[str, list[bool]]] = []

    def answer(dialog: QWidget) -> None:
        assert isinstance(dialog, ActorDialog)
        accepted = []
        for typed in ("dana", "staff:", "staff:da na", "maya", "staff:dana"):
            dialog.field.setText(typed)
            accepted.append(dialog.ok.isEnabled())
        dialog.field.setText("dana")
        qtbot.keyClick(dialog.field, Qt.Key.Key_Return)  # refused: the dialog stays
        assert dialog.isVisible() and "staff:" in dialog.problem.text()
        dialog.field.setText("staff:dana")
        asked.append((dialog.findChild(QLabel).text(), accepted))
        qtbot.keyClick(dialog.field, Qt.Key.Key_Return)

    modals.expect(answer)
    unlock(qtbot, inspector, demo_path, person="ines")
    intro, accepted = asked[0]
    assert "ines</b>'s memory" in intro  # the first person listed is opened
    assert accepted == [False, False, False, False, True]
    assert inspector.controller.session is not None
    assert inspector.controller.session.actor == "staff:dana"
    assert inspector.window.actor_label.text() == "acting as staff:dana"


def test_item4_the_person_themself_only_on_a_one_person_store() -> None:
    assert check_actor(" staff:dana.k-1 ", "maya", False) == "staff:dana.k-1"
    assert check_actor("maya", "maya", True) == "maya"
    for typed, one in (("maya", False), ("sam", True), ("dana", True), ("staff:x/y", False)):
        with pytest.raises(InvalidInput, match="staff:"):
            check_actor(typed, "maya", one)


# ---- 5. Candidate conflicts -------------------------------------------------------------


def test_item5_P6_after_a_conflict_the_conflicted_candidate_stays_selected_reloaded(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    panel = inspector.window.candidates
    show_tab(qtbot, inspector, panel)
    row = next(i for i, c in enumerate(panel.rows) if c["text"] == "Is allergic to peanuts.")
    panel.table.selectRow(row)
    wait_idle(qtbot, inspector)
    seen = panel.current()
    assert seen is not None and seen["revision"] == 1
    _decide_elsewhere(demo_path, seen)
    inspector.prompts.reason = "Not needed"
    with qtbot.waitSignal(inspector.controller.failed, timeout=SIGNAL_TIMEOUT) as got:
        panel.reject_button.click()
    assert "someone else decided first" in got.args[0]
    wait_idle(qtbot, inspector)
    now = panel.current()
    assert now is not None and now["id"] == seen["id"]
    assert now["status"] == "approved" and now["revision"] == 2
    qtbot.waitUntil(lambda: "lee (staff)" in panel.details.toPlainText(), timeout=SIGNAL_TIMEOUT)
    assert "approved" in panel.details.toPlainText()
    assert not panel.approve_button.isEnabled() and not panel.reject_button.isEnabled()
    assert panel.apply_button.isEnabled()


# ---- 6. Time travel is visibly the past -------------------------------------------------


def test_item6_as_of_shows_a_banner_the_note_then_and_no_edit_actions(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    w, f = inspector.window, inspector.controller.notes
    filters = w.filters
    filters.status.setCurrentIndex(filters.status.findText("All intervals"))
    qtbot.waitUntil(
        lambda: "Has a dentist appointment on Tuesday." in note_texts(inspector),
        timeout=SIGNAL_TIMEOUT,
    )
    select_note(qtbot, inspector, "Has a dentist appointment on Tuesday.")
    assert f.detail is not None and f.detail["status"] == "deleted"
    assert f.detail["valid_to"] is not None
    assert not w.time_travel_banner.isVisible()
    deleted = w.notes_model.note_at(
        note_texts(inspector).index("Has a dentist appointment on Tuesday.")
    )
    assert deleted is not None and deleted.valid_to is not None
    before = deleted.valid_to - timedelta(minutes=1)
    filters.moment.setDateTime(QDateTime(before).toTimeZone(QTimeZone.utc()))
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT):
        filters.time_travel.setChecked(True)
    wait_idle(qtbot, inspector)
    assert w.time_travel_banner.isVisible()
    assert "Viewing as of" in w.time_travel_banner.label.text()
    assert f.detail is not None and f.detail["status"] == "active"  # as it stood then
    assert f.detail["valid_to"] is None
    assert "As it stood on" in w.detail.browser.toPlainText()
    for button in (w.detail.edit_button, w.detail.scope_button, w.detail.delete_button):
        assert not button.isEnabled()
    for action in (w.edit_action, w.scope_action, w.delete_action):
        assert not action.isEnabled()
    inspector.prompts.asked.clear()
    w.table.setFocus()
    for key in (Qt.Key.Key_F2, Qt.Key.Key_Delete):
        qtbot.keyClick(w.table, key)
    assert inspector.prompts.asked == []
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT):
        w.time_travel_banner.now_button.click()  # back to now
    wait_idle(qtbot, inspector)
    assert not w.time_travel_banner.isVisible()
    assert f.detail is not None and f.detail["status"] == "deleted"


def test_item6_a_note_made_later_did_not_exist_yet(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    select_note(qtbot, inspector, "Is vegetarian.")
    w = inspector.window
    assert inspector.controller.notes.detail is not None
    first = inspector.controller.notes.detail["valid_from"]
    before = datetime.fromisoformat(first) - timedelta(days=1)
    w.filters.moment.setDateTime(QDateTime(before).toTimeZone(QTimeZone.utc()))
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT):
        w.filters.time_travel.setChecked(True)
    wait_idle(qtbot, inspector)
    assert "did not exist yet" in w.detail.browser.toPlainText()
    assert inspector.prompts.errors == []
    assert not w.edit_action.isEnabled()


# ---- 7. Export --------------------------------------------------------------------------


def test_item7_export_asks_where_in_documents_writes_0600_and_says_not_encrypted(
    qtbot: Any,
    real_inspector: Inspector,
    demo_path: Path,
    modals: Modals,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    opened_in: list[str] = []
    told: list[str] = []

    def save(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        opened_in.append(dialog.directory().absolutePath())
        assert "not encrypted" in dialog.windowTitle()
        dialog.selectFile(str(home / "Documents" / "maya-export.json"))
        dialog.accept()

    def read(box: QWidget) -> None:
        assert isinstance(box, QMessageBox)
        told.append(box.text())
        box.accept()

    modals.expect(save)
    modals.expect(read)
    with qtbot.waitSignal(inspector.controller.exported, timeout=SIGNAL_TIMEOUT) as got:
        inspector.window.export_action.trigger()
    qtbot.waitUntil(lambda: bool(told), timeout=SIGNAL_TIMEOUT)
    assert opened_in == [documents_folder()] and documents_folder() == str(home / "Documents")
    written = Path(got.args[0])
    assert written == home / "Documents" / "maya-export.json"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert "not encrypted" in told[0] and str(written) in told[0]
    assert "not encrypted" in inspector.window.statusBar().currentMessage()
    assert list(tmp_path.glob("*.json")) == []  # nothing in the current folder
    assert modals.unexpected == []


def test_item7_an_existing_readable_file_becomes_owner_only(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    target = tmp_path / "old.json"
    target.write_text("{}")
    target.chmod(0o644)
    unlock(qtbot, inspector, demo_path)
    inspector.prompts.path = str(target)
    with qtbot.waitSignal(inspector.controller.exported, timeout=SIGNAL_TIMEOUT):
        inspector.window.export_action.trigger()
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert '"person": "maya"' in target.read_text()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []
    assert "not encrypted" in inspector.prompts.informed[0][1]


# ---- 8. No stale state ------------------------------------------------------------------


def test_item8_the_integrity_badge_resets_after_a_change(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    with qtbot.waitSignal(inspector.controller.verified, timeout=SIGNAL_TIMEOUT):
        inspector.window.verify_action.trigger()
    assert "verified" in inspector.window.integrity_label.text()
    show_tab(qtbot, inspector, inspector.window.tabs.widget(0))
    select_note(qtbot, inspector, "Is vegetarian.")
    inspector.prompts.scope = Scope.PORTABLE
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        inspector.window.scope_action.trigger()
    assert inspector.window.integrity_label.text() == "integrity: not checked"


def _person_line(inspector: Inspector, person: str) -> str:
    people = inspector.window.people
    return next(
        people.item(r).text()
        for r in range(people.count())
        if people.item(r).text().startswith(person + "\n")
    )


def test_item8_people_and_candidate_counts_follow_every_action(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    other = Store.open(str(demo_path), passphrase=PASSPHRASE)  # a turn to learn from
    try:
        coached = [c for c in conversations_of(other, PersonId("maya")) if c.agent == "coach"]
        text = "I work at the Grenoble alpine garden."
        append_turn(other, coached[0].id, role="user", author="maya", text=text)
        reply = "Noted."  # P4: the exchange is complete once the reply commits (issue 18)
        append_turn(other, coached[0].id, role="assistant", author="coach", text=reply)
    finally:
        other.close()
    unlock(qtbot, inspector, demo_path)
    w = inspector.window
    candidates_tab = w.tabs.indexOf(w.candidates)
    qtbot.waitUntil(lambda: w.tabs.tabText(candidates_tab) == "Ca&ndidates (3)")
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        w.learn_action.trigger()  # from the Notes tab: the candidates tab is out of sight
    wait_idle(qtbot, inspector)
    assert w.tabs.tabText(candidates_tab) == "Ca&ndidates (4)"
    assert _person_line(inspector, "maya").startswith("maya\n9 active of 14")
    show_tab(qtbot, inspector, w.candidates)
    row = next(i for i, c in enumerate(w.candidates.rows) if c["text"] == "Likes bouldering.")
    w.candidates.table.selectRow(row)
    wait_idle(qtbot, inspector)
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        w.candidates.approve_apply_button.click()
    wait_idle(qtbot, inspector)
    assert _person_line(inspector, "maya").startswith("maya\n10 active of 15")
    assert w.tabs.tabText(candidates_tab) == "Ca&ndidates (3)"
    assert "3 waiting" in w.candidates.summary.text()


def test_item8_the_indexing_message_clears_when_the_search_is_done(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    panel = inspector.window.conversations
    show_tab(qtbot, inspector, panel)
    indexing: list[str] = []
    inspector.window.statusBar().messageChanged.connect(
        lambda m: indexing.append(m) if m.startswith("Indexing") else None
    )
    panel.everywhere.setChecked(True)
    qtbot.keyClicks(panel.query, "bakery")
    with qtbot.waitSignal(inspector.controller.searched, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(panel.query, Qt.Key.Key_Return)
    wait_idle(qtbot, inspector)
    assert indexing and indexing[-1].startswith("Indexing conversations… 7 of 7")
    message = inspector.window.statusBar().currentMessage()
    assert not message.startswith("Indexing") and "match" in message
