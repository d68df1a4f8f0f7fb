"""Issue 16 item 5 (the Agents SDK part): an agent against a local OpenAI-compatible
endpoint (a fake one on loopback) talks with a person over three turns; the person sees in
the inspector's operations what was learned and where it came from, corrects the note, and
the next turn's block carries the correction."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner
from openai import AsyncOpenAI

from engram.adapters.openai_agents import EngramSession
from engram.control.notes import edit_note, list_notes
from engram.control.session import PersonSession
from engram.control.turn_block import turn_sight
from engram.engine.rule_extractor import RuleExtractor
from engram.model.ids import TurnId
from engram.runtime.agents import set_agent
from engram.runtime.conversations import turns
from engram.runtime.learning_worker import LearningWorker
from engram.store.store import Store
from engram.store.verify import verify
from tests.agents_sdk import FakeChatEndpoint

CORRECTED = "Lives in Grenoble, in the French Alps."


@pytest.fixture
def endpoint() -> Iterator[FakeChatEndpoint]:
    fake = FakeChatEndpoint(lambda request: f"Reply {len(fake.requests)}.")
    yield fake
    fake.close()


def test_learned_seen_corrected_and_the_next_block_carries_it(
    store: Store, endpoint: FakeChatEndpoint
) -> None:
    config = {"memory": {"tools": {"search": True}, "learning": {"mode": "automatic"}}}
    set_agent(store, "helper", config, "operator")
    learning = LearningWorker(store, RuleExtractor())
    session = EngramSession.start(store, "maya", agent="helper", learning=learning)
    model = OpenAIChatCompletionsModel(
        model="local", openai_client=AsyncOpenAI(base_url=endpoint.url, api_key="local")
    )
    agent = Agent(
        name="helper",
        model=model,
        instructions=session.instructions("You help."),
        tools=session.tools(),
    )
    person = PersonSession.open(store, "maya")

    async def talk() -> None:
        for text in ["I moved to Grenoble last month.", "What is near me?"]:
            session.after_run(await Runner.run(agent, text, session=session))
            await asyncio.to_thread(learning.drain)
            if text.startswith("I moved"):
                # The person opens the inspector: what was learned, and from where.
                (learned,) = list_notes(person)
                logged = turns(store, session.session_id)
                assert learned.note.sources[0].conversation == session.session_id
                assert learned.note.sources[0].turn == logged[0][0].ref
                assert "Grenoble" in str(learned.text)
                edit_note(person, learned.note.id, text=CORRECTED)
        result = await Runner.run(agent, "Thanks!", session=session)
        session.after_run(result)

    try:
        asyncio.run(talk())
        learning.drain()
    finally:
        learning.close()

    first, second, third = endpoint.system_prompts()
    assert first == "You help."
    assert CORRECTED in second and CORRECTED in third
    assert "last month" not in second + third  # the old version is closed, not served
    logged = turns(store, session.session_id)
    assert [t for _, t in logged][1::2] == ["Reply 1.", "Reply 2.", "Reply 3."]
    sight = turn_sight(person, session.session_id, TurnId(str(logged[3][0].ref)))
    assert sight.block is not None and sight.block.text is not None
    assert CORRECTED in sight.block.text  # what the agent saw, from the usage ledger
    assert verify(store).ok
