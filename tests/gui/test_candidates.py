"""Candidate review in the inspector, as a reviewer uses it (P5, P6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from engram.model.ids import PersonId
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, show_tab, unlock, wait_idle


def _select(qtbot: Any, inspector: Inspector, text: str) -> dict[str, Any]:
    panel = inspector.window.candidates
    row = next(i for i, c in enumerate(panel.rows) if c["text"] == text)
    rect = panel.table.visualRect(panel.table.model().index(row, 4))
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    wait_idle(qtbot, inspector)
    return panel.rows[row]


def test_P5_P6_approve_and_apply_makes_a_note_and_shows_the_trail(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    panel = inspector.window.candidates
    with qtbot.waitSignal(inspector.controller.candidates_shown, timeout=SIGNAL_TIMEOUT):
        inspector.window.tabs.setCurrentWidget(panel)
    wait_idle(qtbot, inspector)
    assert {c["status"] for c in panel.rows} == {"pending"}
    assert "3 waiting" in panel.summary.text()
    _select(qtbot, inspector, "Is allergic to peanuts.")
    assert "sensitive topic" in panel.details.toPlainText()
    assert not panel.apply_button.isEnabled() and panel.approve_button.isEnabled()
    _select(qtbot, inspector, "Likes bouldering.")
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        qtbot.mouseClick(panel.approve_apply_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, inspector)
    assert "Likes bouldering." not in [c["text"] for c in panel.rows]
    assert "2 waiting" in panel.summary.text()
    texts = [
        str(inspector.window.notes_model.index(r, 0).data())
        for r in range(inspector.window.notes_model.rowCount())
    ]
    assert "Likes bouldering." in texts
    panel.status.setCurrentIndex(panel.status.findData("applied"))
    qtbot.waitUntil(lambda: any(c["text"] == "Likes bouldering." for c in panel.rows))
    _select(qtbot, inspector, "Likes bouldering.")
    trail = panel.details.toPlainText()
    assert "approved" in trail and "applied" in trail


def test_W1_learn_from_new_turns_from_the_person_menu(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    other = Store.open(str(demo_path), passphrase=PASSPHRASE)  # a turn arrives meanwhile
    try:
        from engram.runtime.conversations import append_turn, conversations_of

        coached = [c for c in conversations_of(other, PersonId("maya")) if c.agent == "coach"]
        text = "I work at the Grenoble alpine garden."
        append_turn(other, coached[0].id, role="user", author="maya", text=text)
        reply = "Noted."  # P4: the exchange is complete once the reply commits
        append_turn(other, coached[0].id, role="assistant", author="coach", text=reply)
    finally:
        other.close()
    unlock(qtbot, inspector, demo_path)
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT) as got:
        inspector.window.learn_action.trigger()
    assert "1 candidate to review" in got.args[0]
    wait_idle(qtbot, inspector)
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT) as again:
        inspector.window.learn_action.trigger()
    assert again.args[0].startswith("Nothing to learn")
    show_tab(qtbot, inspector, inspector.window.candidates)
    texts = [c["text"] for c in inspector.window.candidates.rows]
    assert "Works at the Grenoble alpine garden." in texts


def test_issue18_item1_P5_the_window_marks_a_sensitive_candidate_with_its_category(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    panel = inspector.window.candidates
    with qtbot.waitSignal(inspector.controller.candidates_shown, timeout=SIGNAL_TIMEOUT):
        inspector.window.tabs.setCurrentWidget(panel)
    wait_idle(qtbot, inspector)
    chosen = _select(qtbot, inspector, "Is allergic to peanuts.")
    row = panel.rows.index(chosen)
    assert panel.table.item(row, 3).text() == "health"  # the flags column names it
    details = panel.details.toPlainText()
    assert "touches a sensitive topic: health" in details
    # what the agent may apply without review is said where the decision is made
    assert "Agent 'coach': Sensitive facts always wait for a person's review" in details
