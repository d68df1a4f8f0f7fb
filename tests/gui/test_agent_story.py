"""Issue 16 item 5, the whole story in the real inspector: an OpenAI Agents SDK agent (the
real SDK and OpenAI client, against an OpenAI-compatible endpoint on loopback) talks with
maya; she opens the inspector, sees the note it learned and the turn it came from, corrects
it with Edit text…; the agent's next turn gets the correction in its block. The agent and
the inspector each hold the store open, as two programs would."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner
from openai import AsyncOpenAI

from engram.adapters.openai_agents import EngramSession
from engram.engine.rule_extractor import RuleExtractor
from engram.runtime.agents import set_agent
from engram.runtime.learning_worker import LearningWorker
from engram.store.store import Store
from tests.agents_sdk import FakeChatEndpoint
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, note_texts, select_note, unlock

CORRECTED = "Lives in Grenoble, in the French Alps."


@pytest.fixture
def endpoint() -> Iterator[FakeChatEndpoint]:
    fake = FakeChatEndpoint(lambda request: f"Reply {len(fake.requests)}.")
    yield fake
    fake.close()


def test_issue16_item5_learned_seen_corrected_in_the_window_and_carried_next_turn(
    qtbot: Any, inspector: Inspector, store: Store, store_path: Path, endpoint: FakeChatEndpoint
) -> None:
    config = {"memory": {"tools": {"search": True}, "learning": {"mode": "automatic"}}}
    set_agent(store, "helper", config, "operator")
    learning = LearningWorker(store, RuleExtractor())
    session = EngramSession.start(store, "maya", agent="helper", learning=learning)
    model = OpenAIChatCompletionsModel(
        model="local", openai_client=AsyncOpenAI(base_url=endpoint.url, api_key="local")
    )
    agent = Agent(
        name="helper", model=model, instructions=session.instructions("You help."), tools=[]
    )

    def turn(text: str) -> None:
        session.after_run(asyncio.run(Runner.run(agent, text, session=session)))
        learning.drain()

    try:
        turn("I moved to Grenoble last month.")
        turn("What is near me?")
        # maya opens the inspector: the note, and the turn it came from.
        unlock(qtbot, inspector, store_path, "maya")
        assert note_texts(inspector) == ["Lives in Grenoble."]
        select_note(qtbot, inspector, "Lives in Grenoble.")
        detail = inspector.controller.notes.detail
        assert detail is not None
        (source,) = detail["sources"]
        assert source["conversation"] == session.session_id and source["turn"]
        shown = inspector.window.detail.browser.toPlainText()
        assert "Provenance" in shown and "the turn of" in shown  # a link to where it was said
        # She corrects it, as anyone would: Edit text…
        inspector.prompts.text = CORRECTED
        with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
            inspector.window.edit_action.trigger()
        qtbot.waitUntil(lambda: note_texts(inspector) == [CORRECTED], timeout=SIGNAL_TIMEOUT)
        turn("Thanks!")
    finally:
        learning.close()
    first, second, third = endpoint.system_prompts()
    assert "Grenoble" not in first
    assert "Lives in Grenoble." in second and CORRECTED not in second
    assert CORRECTED in third and "Lives in Grenoble." not in third.replace(CORRECTED, "")
