"""Issue 21 item 8: the candidates as a keyboard review queue — A approves, R rejects
(asking why), E approves with an edit of text or scope in one step, J/K move — and a
candidate shows the notes it would duplicate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from engram.control import candidates as candidate_control
from engram.control import notes as memory_control
from engram.model.scope import Kind, Scope
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, note_texts, unlock, wait_idle


def _queue(qtbot: Any, inspector: Inspector) -> Any:
    panel = inspector.window.candidates
    with qtbot.waitSignal(inspector.controller.candidates_shown, timeout=SIGNAL_TIMEOUT):
        inspector.window.tabs.setCurrentWidget(panel)
    wait_idle(qtbot, inspector)
    panel.table.setFocus()
    return panel


def _key(qtbot: Any, inspector: Inspector, key: Qt.Key) -> None:
    panel = inspector.window.candidates
    with qtbot.waitSignal(inspector.controller.candidates_shown, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(panel.table, key)
    wait_idle(qtbot, inspector)


def _status(inspector: Inspector, candidate: str) -> dict[str, Any]:
    session = inspector.controller.session
    assert session is not None
    return candidate_control.get_candidate(session, candidate)


def test_issue21_item8_keys_move_approve_reject_and_approve_as_edited(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    panel = _queue(qtbot, inspector)
    pending = [c["id"] for c in panel.rows]
    assert len(pending) == 3 and panel.table.currentRow() == 0
    qtbot.keyClick(panel.table, Qt.Key.Key_J)
    assert panel.table.currentRow() == 1
    qtbot.keyClick(panel.table, Qt.Key.Key_K)
    assert panel.table.currentRow() == 0

    _key(qtbot, inspector, Qt.Key.Key_A)  # approves the first; the next takes its place
    assert _status(inspector, pending[0])["status"] == "approved"
    assert [c["id"] for c in panel.rows] == pending[1:]
    assert panel.current() is not None and panel.current()["id"] == pending[1]

    inspector.prompts.reason = "Said in passing, not worth keeping"
    _key(qtbot, inspector, Qt.Key.Key_R)  # asks why, then rejects
    rejected = _status(inspector, pending[1])
    assert rejected["status"] == "rejected"
    trail = candidate_control.audit(inspector.controller.session, pending[1])  # type: ignore[arg-type]
    assert trail[-1]["reason"] == "Said in passing, not worth keeping"

    last = panel.current()
    assert last is not None and last["id"] == pending[2]
    inspector.prompts.asked.clear()
    inspector.prompts.text = "Edited by the reviewer."
    inspector.prompts.scope = Scope.PORTABLE
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(panel.table, Qt.Key.Key_E)
    wait_idle(qtbot, inspector)
    assert [what for what, _ in inspector.prompts.asked] == ["edit_text", "choose_scope"]
    assert inspector.prompts.asked[0][1] == last["text"]  # the dialog starts from its words
    done = _status(inspector, pending[2])
    assert done["status"] == "applied"
    session = inspector.controller.session
    assert session is not None
    [note] = [v for v in memory_control.list_notes(session) if v.text == "Edited by the reviewer."]
    assert note.note.scope is Scope.PORTABLE
    assert "Edited by the reviewer." in note_texts(inspector)
    assert panel.rows == []


def test_issue21_item8_a_key_on_a_decided_candidate_decides_nothing(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    panel = _queue(qtbot, inspector)
    panel.status.setCurrentIndex(panel.status.findData("rejected"))
    wait_idle(qtbot, inspector)
    [rejected] = panel.rows
    panel.table.setFocus()
    qtbot.keyClick(panel.table, Qt.Key.Key_A)
    wait_idle(qtbot, inspector)
    assert _status(inspector, rejected["id"])["status"] == "rejected"


def test_issue21_item8_a_candidate_shows_the_note_it_would_duplicate(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    session = inspector.controller.session
    assert session is not None
    pending = candidate_control.list_candidates(session, "pending")
    words = pending[0]["text"]
    memory_control.add_note(session, words.upper(), Kind.FACT, Scope.DIRECT)
    panel = _queue(qtbot, inspector)
    row = next(i for i, c in enumerate(panel.rows) if c["text"] == words)
    panel.table.setCurrentCell(row, 0)
    qtbot.waitUntil(
        lambda: "Would duplicate the note" in panel.details.toPlainText(), timeout=SIGNAL_TIMEOUT
    )
    assert words.upper() in panel.details.toPlainText()
    flags = [panel.table.item(r, 3).text() for r in range(panel.table.rowCount())]
    assert any(f.startswith("sensitive") or "health" in f for f in flags if f)


def test_issue21_item8_edit_undo_takes_back_an_approval_made_with_a(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    panel = _queue(qtbot, inspector)
    first = panel.current()
    assert first is not None
    before = set(note_texts(inspector))
    with qtbot.waitSignal(inspector.controller.undo.ready, timeout=SIGNAL_TIMEOUT):
        _key(qtbot, inspector, Qt.Key.Key_A)
    wait_idle(qtbot, inspector)
    approved = _status(inspector, first["id"])
    assert approved["status"] in ("approved", "applied")
    undo = inspector.window.undo_action
    assert undo.isEnabled() and undo.text().startswith("Undo approval of “")
    with qtbot.waitSignal(inspector.controller.undo.candidate_undone, timeout=SIGNAL_TIMEOUT):
        undo.trigger()
    wait_idle(qtbot, inspector)
    assert _status(inspector, first["id"])["status"] == "pending"
    assert first["id"] in [c["id"] for c in panel.rows]  # back in the queue, shown
    assert set(note_texts(inspector)) == before  # and no note of it is left
