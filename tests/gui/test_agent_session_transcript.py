"""Issue 16 item 4: a conversation an Agents SDK session kept reads in the inspector like
any other — each text once, as turns and tool calls; an item Engram does not read (the
agent's reasoning) is shown as kept, never hidden; a popped item shows as removed."""

from __future__ import annotations

import asyncio
from typing import Any

from engram.adapters.openai_agents import EngramSession
from engram.gui.conversations_panel import ConversationsPanel
from engram.runtime.conversations import transcript
from engram.store.store import Store


def test_a_session_transcript_shows_each_text_once(qtbot: Any, store: Store) -> None:
    session = EngramSession.start(store, "maya", agent="helper")
    items = [
        {"role": "user", "content": "What's the weather in Oslo?"},
        {
            "id": "rs_1",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Musing"}],
        },
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "3°C"},
        {"role": "assistant", "content": "Cold: 3°C."},
        {"role": "user", "content": "Never mind that."},
    ]
    asyncio.run(session.add_items(items))
    asyncio.run(session.pop_item())
    panel = ConversationsPanel()
    qtbot.addWidget(panel)
    panel.show_transcript(transcript(store, session.session_id))
    shown = panel.transcript.toPlainText()
    assert shown.count("What's the weather in Oslo?") == 1
    assert shown.count("Cold: 3°C.") == 1
    assert "weather called" in shown and "weather returned" in shown
    assert "reasoning kept for helper's session" in shown and "Musing" in shown
    assert '"holes"' not in shown  # no envelope is shown as if it were a turn
    assert "Never mind that." not in shown
    assert "taken back by the agent's session" in shown  # the excision says why
