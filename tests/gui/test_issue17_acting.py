"""Issue 17, "Acting on what is seen": the inspector acts only on what the person sees.

Keys are pressed back to back (`QTest.keyClick` without waits), and again while a long job
holds the worker (`long_job`), where the window between a key and its answer widens from
milliseconds to seconds.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)

from engram.control import notes as memory_control
from engram.control.wording import actor_named
from engram.gui.add_dialogs import AddNoteDialog
from engram.gui.widgets import PAST_REASON
from engram.model.ids import PersonId
from engram.model.scope import Scope
from engram.store import crypto, journal
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.gui.conftest import (
    SIGNAL_TIMEOUT,
    Inspector,
    Modals,
    demo_exchange,
    long_job,
    note_texts,
    open_person,
    open_transcript,
    select_note,
    show_tab,
    unlock,
    wait_idle,
)

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def _journal(path: Path, person: str = "maya") -> list[tuple[str, str]]:
    """(type, body) of every event of the person's journal."""
    with sqlite3.connect(path) as raw:
        rows = raw.execute("select type, body from journal where person=? order by seq", (person,))
        return [(r[0], r[1]) for r in rows]


def _notes_of(inspector: Inspector, person: str) -> list[str]:
    store = inspector.controller.store
    assert store is not None
    from engram.control.session import PersonSession

    session = PersonSession(store, PersonId(person), "staff:test")
    return [str(v.text) for v in memory_control.list_notes(session)]


def _shown_person(inspector: Inspector) -> str:
    """Whose memory every part of the window shows — they must all agree."""
    w, session = inspector.window, inspector.controller.session
    assert session is not None
    current = w.people.currentItem()
    assert current is not None
    highlighted = current.text().split("\n")[0]
    assert w.windowTitle().startswith(f"{session.person} — ")
    assert sorted(note_texts(inspector)) == sorted(_notes_of(inspector, session.person))
    assert highlighted == session.person, f"{highlighted} is highlighted, {session.person} shown"
    return str(session.person)


# ---- 1. The last person chosen is the one shown ----------------------------------------


def test_issue17_item1_down_twice_shows_the_last_person_chosen(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    open_person(qtbot, inspector, "ines")
    people = inspector.window.people
    people.setFocus()
    qtbot.keyClick(people, Qt.Key.Key_Down)
    qtbot.keyClick(people, Qt.Key.Key_Down)
    wait_idle(qtbot, inspector)
    assert _shown_person(inspector) == "sam"

    # While a long job holds the worker, the person before is not left on screen to be acted
    # on: nothing is shown until the one chosen last arrives.
    with long_job(inspector) as release:
        qtbot.keyClick(people, Qt.Key.Key_Up)
        qtbot.keyClick(people, Qt.Key.Key_Up)
        assert inspector.controller.session is None
        assert note_texts(inspector) == []
        for action in (
            inspector.window.erase_action,
            inspector.window.learn_action,
            inspector.window.add_note_action,
        ):
            assert not action.isEnabled()
        release.set()
    wait_idle(qtbot, inspector)
    assert _shown_person(inspector) == "ines"


@pytest.fixture(scope="module")
def many_people(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of 2,000 people (p0000 … p1999), one with notes."""
    path = tmp_path_factory.mktemp("many") / "many.engram"
    store = Store.create(
        str(path), passphrase=PASSPHRASE, use_keyring=False, kdf=crypto.FAST_KDF_FOR_TESTS
    )
    with store.write() as txn:
        for i in range(2000):
            journal.ensure_person(store, txn, PersonId(f"p{i:04d}"))
    store.close()
    return path


@pytest.mark.slow  # building 2,000 people takes a few seconds, once for the module
def test_issue17_item1_type_to_find_among_2000_people_shows_the_one_found(
    qtbot: Any, inspector: Inspector, many_people: Path, tmp_path: Path
) -> None:
    target = tmp_path / "many.engram"
    target.write_bytes(many_people.read_bytes())
    checkpoint = many_people.with_name(many_people.name + ".checkpoint")
    if checkpoint.exists():
        target.with_name(target.name + ".checkpoint").write_bytes(checkpoint.read_bytes())
    unlock(qtbot, inspector, target, person="p0000")
    people = inspector.window.people
    people.setFocus()
    # Each letter moves the highlight (p1, p19, p199, p1999): four opens, one after another.
    qtbot.keyClicks(people, "p1999")
    assert people.currentItem().text().startswith("p1999\n")
    wait_idle(qtbot, inspector)
    session = inspector.controller.session
    assert session is not None and session.person == "p1999"
    assert inspector.window.windowTitle().startswith("p1999 — ")


# ---- 2. Note actions act on the row selected when the key was pressed -------------------


def _detail_buttons(inspector: Inspector) -> tuple[QWidget, ...]:
    detail = inspector.window.detail
    return (detail.edit_button, detail.scope_button, detail.delete_button)


def _note_events(path: Path, types: tuple[str, ...]) -> list[tuple[str, str]]:
    """The events of `types` in maya's journal, with the note each names."""
    import json

    return [(t, json.loads(b)["note"]) for t, b in _journal(path) if t in types]


def test_issue17_item2_down_then_del_never_deletes_the_row_left(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    w, prompts = inspector.window, inspector.prompts
    allergy = select_note(qtbot, inspector, "Allergic to penicillin.")
    assert note_texts(inspector)[1] == "Is vegetarian."  # the row below
    before = _journal(demo_path)
    prompts.asked.clear()
    w.table.setFocus()
    qtbot.keyClick(w.table, Qt.Key.Key_Down)
    qtbot.keyClick(w.table, Qt.Key.Key_Delete)  # back to back: the detail is not there yet
    controls = (w.edit_action, w.scope_action, w.delete_action, *_detail_buttons(inspector))
    offered = [c.toolTip() for c in controls if c.isEnabled()]
    wait_idle(qtbot, inspector)
    assert prompts.asked == []  # not asked to delete "Allergic to penicillin."
    assert _journal(demo_path) == before
    assert offered == []  # until the detail of the row now selected arrived

    # Once the detail of the row now selected has arrived, Del deletes that row's note.
    detail = inspector.controller.notes.detail
    assert detail is not None and detail["text"] == "Is vegetarian."
    vegetarian = detail["id"]
    deleted_before = _note_events(demo_path, ("deleted",))
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(w.table, Qt.Key.Key_Delete)
    wait_idle(qtbot, inspector)
    assert prompts.asked == [("delete_reason", "Is vegetarian.")]
    assert _note_events(demo_path, ("deleted",)) == [*deleted_before, ("deleted", vegetarian)]
    assert allergy not in [note for _, note in _note_events(demo_path, ("deleted",))]


def test_issue17_item2_during_a_long_job_keys_wait_for_the_note_on_screen(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    """Ctrl+Shift+S pressed while a long job delays the detail of the row just chosen does
    not change the scope of the row before (choosing "portable" that way would publish a
    private note); an action already asked for carries its own note's id to the end."""
    unlock(qtbot, inspector, demo_path)
    w, prompts = inspector.window, inspector.prompts
    select_note(qtbot, inspector, "Allergic to penicillin.")
    prompts.scope = Scope.PORTABLE
    before = _journal(demo_path)
    prompts.asked.clear()
    w.table.setFocus()
    with long_job(inspector) as release:
        qtbot.keyClick(w.table, Qt.Key.Key_Down)
        qtbot.keyClick(w.table, Qt.Key.Key_S, CTRL_SHIFT)
        qtbot.keyClick(w.table, Qt.Key.Key_F2)
        qtbot.keyClick(w.table, Qt.Key.Key_Delete)
        # The detail pane stops showing the note left behind.
        qtbot.waitUntil(
            lambda: (
                w.detail.heading.isVisible()
                and w.detail.heading.text() == "Loading the chosen note…"
            ),
            timeout=SIGNAL_TIMEOUT,
        )
        assert "Allergic to penicillin." not in w.detail.browser.toPlainText()
        release.set()
    wait_idle(qtbot, inspector)
    assert prompts.asked == []
    assert _journal(demo_path) == before
    detail = inspector.controller.notes.detail
    assert detail is not None and detail["text"] == "Is vegetarian."
    assert w.scope_action.isEnabled()

    # Asked for, then the selection moves while the change waits behind a long job: the
    # change still goes to the note that was on screen when the key was pressed.
    vegetarian, scope = detail["id"], Scope(detail["scope"])
    with long_job(inspector) as release:
        qtbot.keyClick(w.table, Qt.Key.Key_S, CTRL_SHIFT)
        qtbot.keyClick(w.table, Qt.Key.Key_Up)
        release.set()
    wait_idle(qtbot, inspector)
    assert prompts.asked == [("choose_scope", (scope, "Is vegetarian."))]
    assert _note_events(demo_path, ("scope_changed",))[-1] == ("scope_changed", vegetarian)
    assert len(_journal(demo_path)) == len(before) + 1


def test_issue17_item2_every_note_dialog_names_the_note_it_acts_on(
    qtbot: Any, real_inspector: Inspector, demo_path: Path, modals: Modals
) -> None:
    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    select_note(qtbot, inspector, "Is vegetarian.")
    w = inspector.window
    named: list[str] = []

    def read_and_cancel(dialog: QWidget) -> None:
        words = " ".join(label.text() for label in dialog.findChildren(QLabel))
        field = dialog.findChild(QPlainTextEdit)
        if field is not None:
            words += " " + field.toPlainText()
        named.append(f"{dialog.windowTitle()}: {'Is vegetarian.' in words}")
        assert isinstance(dialog, QDialog)
        dialog.reject()

    for action in (w.edit_action, w.scope_action, w.delete_action):
        modals.expect(read_and_cancel)
        action.trigger()
        wait_idle(qtbot, inspector)
    assert named == ["Edit note: True", "Change scope: True", "Delete note: True"]
    assert modals.unexpected == []


# ---- 3. Time travel is read-only everywhere ---------------------------------------------


def test_issue17_item3_as_of_turns_every_store_changing_control_off_and_says_why(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)  # acting as staff:test
    w, controller, prompts = inspector.window, inspector.controller, inspector.prompts
    select_note(qtbot, inspector, "Is vegetarian.")
    prompts.scope = Scope.PORTABLE
    with qtbot.waitSignal(controller.undo.ready, timeout=SIGNAL_TIMEOUT):
        w.scope_action.trigger()  # something of mine to undo
    wait_idle(qtbot, inspector)
    show_tab(qtbot, inspector, w.candidates)
    w.candidates.table.selectRow(0)
    wait_idle(qtbot, inspector)
    assert (w.candidates.current() or {}).get("status") == "pending"
    store_changing = {
        "Learn": w.learn_action,
        "Erase person": w.erase_action,
        "Add note": w.add_note_action,
        "Add person": w.add_person_action,
        "Undo": w.undo_action,
        "Approve": w.candidates.approve_button,
        "Approve and apply": w.candidates.approve_apply_button,
        "Reject": w.candidates.reject_button,
        "Delete conversation (button)": w.conversations.delete_button,
    }
    show_tab(qtbot, inspector, w.conversations)
    conversation, _ = demo_exchange(inspector, "Any vegetarian bakeries")  # a tool result
    open_transcript(qtbot, inspector, conversation)
    assert w.delete_conversation_action.isEnabled()
    store_changing["Delete conversation"] = w.delete_conversation_action
    assert all(control.isEnabled() for control in store_changing.values())
    assert "remove this result" in w.conversations.transcript.toPlainText()
    own_tips = {name: control.toolTip() for name, control in store_changing.items()}
    before = _journal(demo_path)

    w.conversations.list.setFocus()
    qtbot.keyClick(w.conversations.list, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    wait_idle(qtbot, inspector)
    assert w.filters.time_travel.isChecked()
    off = {name: c.isEnabled() for name, c in store_changing.items() if c.isEnabled()}
    assert off == {}, f"still on in the past: {sorted(off)}"
    for name, control in store_changing.items():
        assert PAST_REASON in control.toolTip(), name
    assert "remove this result" not in w.conversations.transcript.toPlainText()
    show_tab(qtbot, inspector, w.tabs.widget(0))
    detail = controller.notes.detail
    assert detail is not None and detail["text"] == "Is vegetarian."
    for control in (
        w.edit_action,
        w.scope_action,
        w.delete_action,
        w.detail.edit_button,
        w.detail.scope_button,
        w.detail.delete_button,
    ):
        assert not control.isEnabled() and PAST_REASON in control.toolTip()

    # Keys do nothing, and an action reached anyway refuses, saying why: nothing is written.
    prompts.asked.clear()
    w.table.setFocus()
    for key, modifiers in (
        (Qt.Key.Key_L, CTRL_SHIFT),
        (Qt.Key.Key_Delete, CTRL_SHIFT),
        (Qt.Key.Key_N, CTRL_SHIFT),
        (Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier),
        (Qt.Key.Key_Delete, Qt.KeyboardModifier.NoModifier),
    ):
        qtbot.keyClick(w.table, key, modifiers)
    for reach in (
        controller.person_actions.learn_now,
        controller.person_actions.erase_person,
        controller.adding.add_person,
        controller.adding.add_note,
        controller.undo.undo_last,
        controller.notes.delete_selected,
        lambda: controller.conversations.delete_conversation(conversation),
        lambda: controller.candidates.reject("c_x", 1),
        lambda: controller.candidates.approve("c_x", 1, True),
    ):
        reach()
        assert w.statusBar().currentMessage() == PAST_REASON
    wait_idle(qtbot, inspector)
    assert prompts.asked == [] and prompts.confirmations == []
    assert _journal(demo_path) == before

    # Back to now: every control is offered again, with its own tooltip.
    w.time_travel_banner.now_button.click()
    wait_idle(qtbot, inspector)
    show_tab(qtbot, inspector, w.conversations)
    assert "remove this result" in w.conversations.transcript.toPlainText()
    for name, control in store_changing.items():
        assert control.isEnabled(), name
        assert control.toolTip() == own_tips[name], name


# ---- 4. Undo restores, it does not copy --------------------------------------------------


def _audit_actions(qtbot: Any, inspector: Inspector) -> list[str]:
    show_tab(qtbot, inspector, inspector.window.audit)
    shown = inspector.window.audit.table.model()
    return [
        str(shown.index(row, column).data())
        for row in range(shown.rowCount())
        for column in range(shown.columnCount())
    ]


def test_issue17_item4_undo_of_a_deletion_reopens_the_same_note(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)  # acting as staff:test
    w, controller = inspector.window, inspector.controller
    note = select_note(qtbot, inspector, "Allergic to penicillin.")
    before = controller.notes.detail
    assert before is not None and before["usage"]  # the agent was given it
    w.table.setFocus()
    with qtbot.waitSignal(controller.undo.ready, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(w.table, Qt.Key.Key_Delete)
    wait_idle(qtbot, inspector)
    assert "Allergic to penicillin." not in note_texts(inspector)
    assert w.undo_action.text() == "Undo deletion of “Allergic to penicillin.”"
    w.table.setFocus()
    with qtbot.waitSignal(controller.undo.undone, timeout=SIGNAL_TIMEOUT) as undone:
        qtbot.keyClick(w.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    wait_idle(qtbot, inspector)
    assert undone.args == [note]
    after = controller.notes.detail
    assert after is not None and after["id"] == note
    for key in ("actor", "text", "kind", "scope", "sources", "corroborators", "usage"):
        assert after[key] == before[key], key
    assert after["valid_from"] == before["valid_from"] and after["valid_to"] is None
    assert after["status"] == "active"
    assert [h["type"] for h in after["history"]][-2:] == ["deleted", "undone"]
    assert f"Recorded by {actor_named(before['actor'])}" in w.detail.browser.toPlainText()
    assert note_texts(inspector).count("Allergic to penicillin.") == 1
    actions = _audit_actions(qtbot, inspector)
    assert any(a.startswith("deleted “Allergic to penicillin.”") for a in actions)
    assert any(a.startswith("undid a deletion:") for a in actions)

    # What did the agent see: the restored note holds now, it was not "deleted since".
    conversation, reply = demo_exchange(inspector, "What should I cook tonight?")
    open_transcript(qtbot, inspector, conversation)
    from engram.gui.turn_sight_dialog import turn_sight_html

    inspector.prompts.asked.clear()
    with qtbot.waitSignal(controller.conversations.sight_shown, timeout=SIGNAL_TIMEOUT):
        controller.conversations.show_turn_sight(conversation, reply)
    [(_, sight)] = inspector.prompts.asked
    [placed] = [p for p in sight.block.placed if p.note == note]
    assert placed.status == "active"
    page = turn_sight_html(sight)
    assert "deleted since" not in page and "holds now" in page


# ---- 6. No keyboard traps, no silent cancels ---------------------------------------------


def _back_to_the_window(qtbot: Any, inspector: Inspector) -> None:
    """After a modal dialog, the window is active again (its shortcuts answer)."""
    inspector.window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is inspector.window)


def test_issue17_item6_tab_moves_on_return_confirms_and_a_cancel_says_so(
    qtbot: Any, real_inspector: Inspector, demo_path: Path, modals: Modals
) -> None:
    inspector = real_inspector  # the real dialogs, acting as staff:test
    unlock(qtbot, inspector, demo_path)
    w = inspector.window
    seen: dict[str, Any] = {}

    # Add note: Tab leaves Text for Kind; no tab is typed.
    def add_note(dialog: QWidget) -> None:
        assert isinstance(dialog, AddNoteDialog)
        dialog.text.setFocus()
        qtbot.keyClicks(dialog.text, "Likes tea.")
        qtbot.keyClick(dialog.text, Qt.Key.Key_Tab)
        seen["add note"] = (dialog.text.toPlainText(), QApplication.focusWidget() is dialog.kind)
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Escape)

    modals.expect(add_note)
    w.add_note_action.trigger()
    qtbot.waitUntil(lambda: "add note" in seen, timeout=SIGNAL_TIMEOUT)
    wait_idle(qtbot, inspector)
    assert seen["add note"] == ("Likes tea.", True)
    assert w.statusBar().currentMessage() == "Cancelled: no note was added."

    # Edit: Tab moves on from the text, and Save has a key of its own (Alt+S).
    select_note(qtbot, inspector, "Is vegetarian.")

    def edit(dialog: QWidget) -> None:
        field = dialog.findChild(QPlainTextEdit)
        save = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save)
        field.selectAll()
        qtbot.keyClicks(field, "Is vegan.")
        qtbot.keyClick(field, Qt.Key.Key_Tab)
        seen["edit"] = (save.text(), field.toPlainText(), field.hasFocus())
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)

    modals.expect(edit)
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        w.edit_action.trigger()
    wait_idle(qtbot, inspector)
    assert seen["edit"] == ("&Save", "Is vegan.", False)
    assert "Is vegan." in note_texts(inspector)

    # Erase person: the keyboard starts in the id field; Return with a wrong id says why
    # nothing happens; Esc cancels, and the status bar says so.
    def erase_then_cancel(dialog: QWidget) -> None:
        assert isinstance(dialog, QDialog)
        field = QApplication.focusWidget()
        seen["focus"] = isinstance(field, QLineEdit)
        qtbot.keyClicks(field, "mya")
        qtbot.keyClick(field, Qt.Key.Key_Return)
        seen["wrong id"] = (
            dialog.isVisible(),
            [label.text() for label in dialog.findChildren(QLabel) if "“maya”" in label.text()],
        )
        qtbot.keyClick(field, Qt.Key.Key_Escape)

    modals.expect(erase_then_cancel)
    _back_to_the_window(qtbot, inspector)
    w.people.setFocus()
    qtbot.keyClick(w.people, Qt.Key.Key_Delete, CTRL_SHIFT)
    wait_idle(qtbot, inspector)
    assert seen["focus"] is True
    visible, why = seen["wrong id"]
    assert visible and why, "Return with a wrong id closed the dialog or said nothing"
    assert w.statusBar().currentMessage() == "Cancelled: nothing about maya was erased."
    assert inspector.controller.session is not None

    # Return after typing the right id confirms.
    open_person(qtbot, inspector, "ines")

    def erase(dialog: QWidget) -> None:
        qtbot.keyClicks(QApplication.focusWidget(), "ines")
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)

    def report(dialog: QWidget) -> None:
        seen["report"] = dialog.windowTitle()

        # Found under openbox: under the report, "working…" stayed on while nothing worked,
        # and the last person's note count stayed over an empty table. The reload the
        # erasure starts may still be running when the report opens (then "working…" is
        # true): what must hold is that both let go once it is done, under the report.
        def under() -> tuple[str, str]:
            return (w.busy_label.text(), w.filters.count.text())

        with contextlib.suppress(qtbot.TimeoutError):
            qtbot.waitUntil(lambda: under() == ("", ""), timeout=5_000)
        seen["under the report"] = under()
        assert isinstance(dialog, QDialog)
        dialog.reject()

    modals.expect(erase)
    modals.expect(report)
    _back_to_the_window(qtbot, inspector)
    w.people.setFocus()
    qtbot.keyClick(w.people, Qt.Key.Key_Delete, CTRL_SHIFT)
    qtbot.waitUntil(lambda: "report" in seen, timeout=SIGNAL_TIMEOUT)
    wait_idle(qtbot, inspector)
    assert seen["report"] == "ines was erased"
    assert seen["under the report"] == ("", "")
    assert modals.unexpected == []


def test_issue17_item6_return_on_the_button_reached_by_tab_presses_that_button(
    qtbot: Any, real_inspector: Inspector, demo_path: Path, modals: Modals
) -> None:
    """Found in the real window under openbox: Tab from the reason to "Delete note", then
    Return, did nothing at all (the button was not auto-default and the dialog's default,
    Cancel, did not fire either). Return in the reason field still cancels (test_safety)."""
    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    select_note(qtbot, inspector, "Is vegetarian.")
    seen: dict[str, Any] = {}

    def tab_to_delete_then_return(dialog: QWidget) -> None:
        qtbot.keyClicks(dialog.reason, "asked by maya")
        for _ in range(3):  # the buttons' order follows the platform's layout
            qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
            if QApplication.focusWidget() is dialog.delete:
                break
        seen["focus"] = QApplication.focusWidget() is dialog.delete
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
        seen["closed"] = not dialog.isVisible()

    modals.expect(tab_to_delete_then_return)
    inspector.window.table.setFocus()
    qtbot.keyClick(inspector.window.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: "closed" in seen, timeout=SIGNAL_TIMEOUT)
    wait_idle(qtbot, inspector)
    assert seen == {"focus": True, "closed": True}
    assert "Is vegetarian." not in note_texts(inspector)
    assert modals.unexpected == []


def test_issue17_item6_tab_goes_through_the_buttons_in_the_order_they_are_drawn(
    qtbot: Any,
) -> None:
    """Found under openbox: in Delete note, Tab from the reason reached Cancel (drawn
    last) before "Delete note"; Tab follows what the person sees."""
    from engram.gui.dialogs import DeleteNoteDialog, QuestionDialog

    dialog = DeleteNoteDialog("Is vegetarian.")
    qtbot.addWidget(dialog)
    box = dialog.buttons.layout()
    drawn = [w for i in range(box.count()) if isinstance(w := box.itemAt(i).widget(), QPushButton)]
    assert len(drawn) == 2
    dialog.show()
    qtbot.waitExposed(dialog)
    # Cancel stays the default once shown: a default set before the buttons were inside
    # the dialog was never heard of, and Qt made the first auto-default button, Delete,
    # the default once Tab reached it first.
    assert dialog.cancel.isDefault() and not dialog.delete.isDefault()
    dialog.reason.setFocus()
    reached = []
    for _ in drawn:
        dialog.focusNextChild()  # what Tab does
        reached.append(dialog.focusWidget())
    assert reached == drawn
    question = QuestionDialog("Create folder?", "Create it?", "Create folder")
    qtbot.addWidget(question)
    question.show()
    qtbot.waitExposed(question)
    cancel = question.buttons.button(QDialogButtonBox.StandardButton.Cancel)
    assert cancel.isDefault() and not question.yes.isDefault()
