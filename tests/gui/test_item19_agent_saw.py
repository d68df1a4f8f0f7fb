"""Issue 8 item 19: "What did the agent see?" on an assistant turn of a transcript shows the
exact block that turn got, from the usage ledger, with links that select the note."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QWidget

from engram.control.turn_block import TurnSight
from engram.gui.conversations_panel import SIGHT_LINK
from engram.gui.turn_sight_dialog import NOTE_LINK, TurnSightDialog
from engram.model.scope import AudienceKind
from tests.gui.conftest import (
    SIGNAL_TIMEOUT,
    Inspector,
    Modals,
    demo_exchange,
    open_transcript,
    unlock,
    wait_idle,
)

CTRL = Qt.KeyboardModifier.ControlModifier


def _ask_what_it_saw(qtbot: Any, inspector: Inspector, turn: str) -> None:
    panel = inspector.window.conversations
    links = re.findall(r'href="(sight:[^"]+)"', panel.transcript.toHtml())
    assert f"{SIGHT_LINK}{turn}" in links
    panel.transcript.anchorClicked.emit(QUrl(f"{SIGHT_LINK}{turn}"))


def test_item19_an_assistant_turn_shows_the_block_it_got_and_links_to_its_notes(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    conversation, reply = demo_exchange(inspector, "What should I cook tonight?")
    open_transcript(qtbot, inspector, conversation)
    html = inspector.window.conversations.transcript.toHtml()
    # Only assistant turns offer it: one link in this conversation of one question, one reply.
    assert html.count("What did the agent see?") == 1
    inspector.prompts.asked.clear()
    with qtbot.waitSignal(inspector.controller.conversations.sight_shown, timeout=SIGNAL_TIMEOUT):
        _ask_what_it_saw(qtbot, inspector, reply)
    [(what, sight)] = inspector.prompts.asked
    assert what == "show_turn_sight" and isinstance(sight, TurnSight)
    assert sight.block is not None and sight.block.audience is AudienceKind.SUBJECT_ALONE
    assert sight.block.text is not None and "Allergic to penicillin." in sight.block.text
    assert [t.via for t in sight.tools] == ["recall"]

    # A note link chosen in the dialog selects that note in the notes view.
    chosen = next(p for p in sight.block.placed if p.text == "Lives in Grenoble.")
    inspector.prompts.chosen_note = chosen.note
    with qtbot.waitSignal(
        inspector.controller.detail_shown,
        timeout=SIGNAL_TIMEOUT,
        check_params_cb=lambda note: note == chosen.note,
    ):
        _ask_what_it_saw(qtbot, inspector, reply)
    wait_idle(qtbot, inspector)
    assert inspector.window.tabs.currentIndex() == 0
    detail = inspector.controller.notes.detail
    assert detail is not None and detail["text"] == "Lives in Grenoble."


def test_item19_the_real_dialog_shows_the_audience_rank_and_what_was_left_out(
    qtbot: Any, real_inspector: Inspector, demo_path: Path, modals: Modals
) -> None:
    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    conversation, reply = demo_exchange(inspector, "Maya, are you leading the community garden")
    open_transcript(qtbot, inspector, conversation)
    seen: list[str] = []

    def read_then_choose(dialog: QWidget) -> None:
        assert isinstance(dialog, TurnSightDialog)
        text = dialog.page.toPlainText()
        seen.append(text)
        # A shared conversation: her private notes were withheld, and the dialog says so.
        assert "Others could read this conversation (sam)" in text
        assert "Others can read this conversation, so private memory" in text  # the block
        assert "Language: French" in text and "Nothing was left out" in text
        french = re.search(rf"{NOTE_LINK}(n_[0-9a-f]+)", dialog.page.toHtml())
        assert french is not None
        dialog.page.anchorClicked.emit(QUrl(french.group(0)))

    modals.expect(read_then_choose)
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT):
        _ask_what_it_saw(qtbot, inspector, reply)
    wait_idle(qtbot, inspector)
    detail = inspector.controller.notes.detail
    assert seen and detail is not None and detail["text"] == "French"
    assert modals.unexpected == []


def test_item19_a_lock_closes_the_dialog_and_nothing_is_selected_afterwards(
    qtbot: Any, real_inspector: Inspector, demo_path: Path, modals: Modals
) -> None:
    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    conversation, reply = demo_exchange(inspector, "What should I cook tonight?")
    open_transcript(qtbot, inspector, conversation)
    still_open: list[bool] = []

    def lock(dialog: QWidget) -> None:
        assert isinstance(dialog, TurnSightDialog)
        qtbot.keyClick(dialog, Qt.Key.Key_L, CTRL)
        still_open.append(dialog.isVisible())

    modals.expect(lock)
    with qtbot.waitSignal(inspector.controller.locked, timeout=SIGNAL_TIMEOUT):
        _ask_what_it_saw(qtbot, inspector, reply)
    wait_idle(qtbot, inspector)
    assert still_open == [False]
    assert inspector.controller.session is None and modals.unexpected == []
