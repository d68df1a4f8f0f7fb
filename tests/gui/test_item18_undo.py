"""Issue 8 item 18: Note > Undo (Ctrl+Z) undoes the actor's own last edit, change of scope
or deletion in this session, as a new journal event; the audit log shows both steps (C5)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from engram.gui.dialogs import EditTextDialog
from engram.model.scope import Scope
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


def _journal(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as raw:
        rows = raw.execute("select type, actor from journal where person='maya' order by seq")
        return [(r[0], r[1]) for r in rows]


def _ready(qtbot: Any, inspector: Inspector) -> None:
    wait_idle(qtbot, inspector)
    qtbot.waitUntil(lambda: not inspector.controller.tasks.busy, timeout=SIGNAL_TIMEOUT)


def test_item18_ctrl_z_undoes_my_edit_and_the_audit_log_shows_both_steps(
    qtbot: Any, real_inspector: Inspector, demo_path: Path, modals: Modals
) -> None:
    inspector = real_inspector  # acting as staff:test, with the real Edit dialog
    unlock(qtbot, inspector, demo_path)
    undo = inspector.window.undo_action
    # The demo's changes by staff:dana and maya are not staff:test's: nothing to undo yet.
    assert not undo.isEnabled() and undo.text() == "&Undo"
    select_note(qtbot, inspector, "Lives in Grenoble.")

    def edit(dialog: QWidget) -> None:
        assert isinstance(dialog, EditTextDialog)
        dialog.field.setPlainText("Lives in Chambéry.")
        dialog.accept()

    modals.expect(edit)
    with qtbot.waitSignal(inspector.controller.undo.ready, timeout=SIGNAL_TIMEOUT):
        inspector.window.edit_action.trigger()
    _ready(qtbot, inspector)
    assert undo.isEnabled() and undo.text() == "Undo edit of “Lives in Chambéry.”"
    assert "Lives in Chambéry." in note_texts(inspector)
    before = _journal(demo_path)

    inspector.window.activateWindow()  # back from the modal Edit dialog
    qtbot.waitUntil(lambda: QApplication.activeWindow() is inspector.window)
    inspector.window.table.setFocus()
    with qtbot.waitSignal(inspector.controller.undo.undone, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(inspector.window.table, Qt.Key.Key_Z, CTRL)
    _ready(qtbot, inspector)
    assert "Lives in Grenoble." in note_texts(inspector) and "Lives in Chambéry." not in note_texts(
        inspector
    )
    detail = inspector.controller.notes.detail
    assert detail is not None and detail["text"] == "Lives in Grenoble."
    assert detail["status"] == "active"
    # History is never rewritten: one event more, the earlier ones untouched.
    after = _journal(demo_path)
    assert after[: len(before)] == before and after[len(before) :] == [("undone", "staff:test")]
    assert not undo.isEnabled()  # an undo is the last change now: nothing more to undo
    show_tab(qtbot, inspector, inspector.window.audit)
    shown = inspector.window.audit.table.model()
    actions = [
        str(shown.index(row, column).data())
        for row in range(shown.rowCount())
        for column in range(shown.columnCount())
    ]
    assert any("corrected as" in a for a in actions) and any(
        a.startswith("undid an edit:") for a in actions
    )
    assert modals.unexpected == []


def test_item18_undo_is_off_in_the_past_and_refuses_when_the_note_changed(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    undo = inspector.window.undo_action
    select_note(qtbot, inspector, "Is vegetarian.")
    inspector.prompts.scope = Scope.PORTABLE
    with qtbot.waitSignal(inspector.controller.undo.ready, timeout=SIGNAL_TIMEOUT):
        inspector.window.scope_action.trigger()
    _ready(qtbot, inspector)
    assert undo.text() == "Undo change of scope of “Is vegetarian.”" and undo.isEnabled()

    inspector.window.filters.time_travel.setChecked(True)  # viewing the past: no edits
    _ready(qtbot, inspector)
    assert not undo.isEnabled()
    inspector.window.filters.time_travel.setChecked(False)
    _ready(qtbot, inspector)
    assert undo.isEnabled()

    # Someone changes the note meanwhile (here: staff:test changes its scope again in another
    # window); this window's Undo names a change that is no longer the last one.
    from engram.control import notes as memory_control

    session = inspector.controller.session
    assert session is not None
    note = next(v.note.id for v in memory_control.list_notes(session) if v.text == "Is vegetarian.")
    memory_control.edit_note(session, note, scope=Scope.DIRECT)
    before = _journal(demo_path)
    undo.trigger()
    _ready(qtbot, inspector)
    assert inspector.prompts.errors == [
        "You changed something after that; only your last change can be undone."
    ]
    assert _journal(demo_path) == before  # nothing written
