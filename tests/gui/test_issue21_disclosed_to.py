"""Issue 21 item 6: the note detail lists every turn, audience and agent that received the
note, each linked to "What did the agent see?"."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl

from engram.control.turn_block import TurnSight
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, select_note, unlock, wait_idle

AN_ID = re.compile(r"\b[nct]_[0-9a-f]{6,}\b")


def test_issue21_item6_the_detail_names_who_received_the_note_and_opens_what_they_saw(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    select_note(qtbot, inspector, "Allergic to penicillin.")
    detail = inspector.controller.notes.detail
    assert detail is not None
    disclosed = detail["disclosed"]
    assert disclosed and len(disclosed) == len(detail["usage"])
    browser = inspector.window.detail.browser
    shown = browser.toPlainText()
    assert f"Disclosed to {len(disclosed)} time" in shown
    assert not AN_ID.search(shown)  # no bare ids in the window: they are in tooltips
    for use in disclosed:
        if use["conversation_kept"]:
            assert f"who could read the answer: {use['readers']}" in shown
            assert f"the agent {use['agent']}" in shown
    links = re.findall(r'href="(sight:[^"]+)"', browser.toHtml())
    seen = [u for u in disclosed if u["seen"]]
    assert len(links) == len(seen) and shown.count("What did the agent see?") == len(seen)
    use = seen[-1]
    inspector.prompts.asked.clear()
    with qtbot.waitSignal(inspector.controller.conversations.sight_shown, timeout=SIGNAL_TIMEOUT):
        browser.anchorClicked.emit(QUrl(f"sight:{use['conversation']}/{use['turn']}"))
    wait_idle(qtbot, inspector)
    [(what, sight)] = inspector.prompts.asked
    assert what == "show_turn_sight" and isinstance(sight, TurnSight)
    placed = [p.note for p in sight.block.placed] if sight.block else []
    tools = [n.note for t in sight.tools for n in t.notes]
    assert detail["id"] in placed + tools  # what that turn got holds this note
