"""Issue 16 item 4: an Agents SDK `Agent` through `Runner.run` with Engram as its memory —
the real library, a fake `Model` (the SDK's interface), no network. The turns land in the
signed log, learning runs after the run (off the reply path), the next turn's instructions
carry what was learned, and the memory tools follow the agent's configuration (P2, W6)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from typing import Any

import pytest
from agents import Agent, Runner, function_tool

from engram.adapters.openai_agents import EngramSession
from engram.control.candidates import list_candidates
from engram.control.notes import list_notes
from engram.control.session import PersonSession
from engram.control.turn_block import turn_sight
from engram.engine.extraction import ExtractionRequest, Proposal
from engram.engine.rule_extractor import RuleExtractor
from engram.model.conversation import EntryKind
from engram.model.errors import NotAllowed
from engram.model.event_bodies import ItemUsed
from engram.model.ids import TurnId
from engram.runtime import conversations, history
from engram.runtime.agents import set_agent
from engram.runtime.learning_worker import LearningWorker
from engram.store import journal
from engram.store.store import Store
from engram.store.verify import verify
from tests.agents_sdk import ScriptedModel, Seen, reply, tool_call

BASE = "You are a helpful assistant."


def _configure(store: Store, *, remember: bool = True, mode: str = "automatic") -> None:
    tools = {"search": True, "remember": remember}
    set_agent(store, "helper", {"memory": {"tools": tools, "learning": {"mode": mode}}}, "test")


@pytest.fixture
def worker(store: Store) -> Any:
    learning = LearningWorker(store, RuleExtractor())
    yield learning
    learning.close()


def _agent(session: EngramSession, model: ScriptedModel, *extra: Any) -> Agent[Any]:
    return Agent(
        name="helper",
        instructions=session.instructions(BASE),
        model=model,
        tools=[*session.tools(), *extra],
    )


def _turn(agent: Agent[Any], session: EngramSession, text: str) -> Any:
    return asyncio.run(Runner.run(agent, text, session=session))


def _assembly_events(store: Store) -> list[Any]:
    with store.read() as conn:
        return [
            e
            for e in journal.events(conn, "maya")
            if isinstance(e.body, ItemUsed) and e.body.via == "assembly"
        ]


def test_three_turns_are_logged_learned_from_and_change_the_next_block(
    store: Store, worker: LearningWorker
) -> None:
    """The turns are recorded and verify; learning after the first run makes a note from
    "I moved to Grenoble"; the next turns' instructions (what the model receives) carry it,
    recorded in the usage ledger once per turn, as the inspector's "what did the agent
    see?" shows."""
    _configure(store)
    session = EngramSession.start(store, "maya", agent="helper", learning=worker)

    def recalls(seen: Seen) -> list[Any]:
        return [tool_call("memory_recall", {}, "call_1")]

    model = ScriptedModel(
        [[reply("Noted.")], recalls, [reply("Grenoble has lovely hikes.")], [reply("Bye!")]]
    )
    agent = _agent(session, model)

    first = _turn(agent, session, "I moved to Grenoble last month.")
    assert first.final_output == "Noted."
    assert session.after_run(first) is True
    worker.drain()
    notes = list_notes(PersonSession.open(store, "maya"))
    assert [n.text for n in notes if "Grenoble" in (n.text or "")], notes
    learned = next(n for n in notes if "Grenoble" in (n.text or ""))
    assert learned.note.sources[0].conversation == session.session_id  # where it came from

    second = _turn(agent, session, "Any ideas for the weekend?")
    session.after_run(second)
    _turn(agent, session, "Thanks.")

    assert model.seen[0].instructions == BASE  # nothing was known yet
    for seen in model.seen[1:]:
        assert seen.instructions is not None and str(learned.text) in seen.instructions
    recalled = json.loads(
        next(i["output"] for i in model.seen[2].input if i.get("type") == "function_call_output")
    )
    assert [n["text"] for n in recalled["notes"]] == [learned.text]

    turns = conversations.turns(store, session.session_id)
    assert [(e.kind, t) for e, t in turns] == [
        (EntryKind.USER, "I moved to Grenoble last month."),
        (EntryKind.ASSISTANT, "Noted."),
        (EntryKind.USER, "Any ideas for the weekend?"),
        (EntryKind.ASSISTANT, "Grenoble has lovely hikes."),
        (EntryKind.USER, "Thanks."),
        (EntryKind.ASSISTANT, "Bye!"),
    ]
    calls = history.list_tool_calls(store, session.session_id)["calls"]
    assert [c["name"] for c in calls] == ["memory_recall"]
    assert verify(store).ok

    # One block per user turn, though the second turn took two model calls.
    assert len(_assembly_events(store)) == 3
    answer = TurnId(str(turns[3][0].ref))
    sight = turn_sight(PersonSession.open(store, "maya"), session.session_id, answer)
    assert sight.block is not None
    assert [n.note for n in sight.block.placed] == [learned.note.id]
    assert sight.block.text is not None and sight.block.text in str(model.seen[1].instructions)


def test_memory_tools_follow_the_agents_configuration(store: Store) -> None:
    """P2: a tool the configuration disables is not offered, and one turned on between runs
    is offered from the next step; W6, P3: memory_remember makes a pending candidate for
    the host's person, whatever person the model names."""
    _configure(store, remember=False)
    session = EngramSession.start(store, "maya", agent="helper")
    remembers = tool_call(
        "memory_remember", {"text": "Plays the cello", "kind": "fact", "person": "bob"}, "c1"
    )
    model = ScriptedModel([[reply("Hello.")], [remembers], [reply("I'll ask to remember.")]])
    agent = _agent(session, model)

    _turn(agent, session, "Hello")
    assert "memory_remember" not in model.seen[0].tools
    assert {"memory_recall", "memory_search", "conversation_find"} <= set(model.seen[0].tools)

    _configure(store, remember=True)
    _turn(agent, session, "I play the cello, remember that.")
    assert "memory_remember" in model.seen[1].tools
    (candidate,) = list_candidates(PersonSession.open(store, "maya"), "pending")
    assert candidate["text"] == "Plays the cello"
    assert candidate["source"]["conversation"] == session.session_id
    output = json.loads(
        next(i["output"] for i in model.seen[2].input if i.get("type") == "function_call_output")
    )
    assert output["status"] == "pending"
    assert session.call_tool("memory_forget", json.dumps({"item_id": "n_x"})) == {
        "error": "The tool 'memory_forget' is not available to this agent."
    }


class HeldExtractor:
    """The rule extractor, held until the test lets it go."""

    name = "rules"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()

    def extract(self, request: ExtractionRequest) -> Sequence[Proposal]:
        self.started.set()
        self.release.wait(10)
        return RuleExtractor().extract(request)


def test_learning_runs_after_the_run_off_the_reply_path(store: Store) -> None:
    """W2: after_run returns while the extraction pass is still running on the worker."""
    _configure(store)
    extractor = HeldExtractor()
    learning = LearningWorker(store, extractor)
    try:
        session = EngramSession.start(store, "maya", agent="helper", learning=learning)
        result = _turn(
            _agent(session, ScriptedModel([[reply("Noted.")]])), session, "I moved to Lyon."
        )
        assert session.after_run(result) is True
        assert extractor.started.wait(10)
        assert list_notes(PersonSession.open(store, "maya")) == []  # the reply did not wait
        extractor.release.set()
        learning.drain()
        assert [n.text for n in list_notes(PersonSession.open(store, "maya"))]
    finally:
        extractor.release.set()
        learning.close()


def test_a_run_waiting_for_approval_teaches_nothing(store: Store, worker: LearningWorker) -> None:
    """P4: a run interrupted for a tool approval is no completed turn: nothing is queued."""
    _configure(store)

    @function_tool(needs_approval=True)
    def book_train(city: str) -> str:
        """Book a train."""
        return f"booked to {city}"

    session = EngramSession.start(store, "maya", agent="helper", learning=worker)
    model = ScriptedModel([[tool_call("book_train", {"city": "Lyon"}, "c9")]])
    result = _turn(_agent(session, model, book_train), session, "I moved to Lyon.")
    assert result.interruptions
    assert session.after_run(result) is False
    worker.drain()
    assert list_notes(PersonSession.open(store, "maya")) == []


def test_after_run_without_a_worker_says_so(store: Store) -> None:
    session = EngramSession.start(store, "maya", agent="helper")
    result = _turn(_agent(session, ScriptedModel([[reply("Hi.")]])), session, "Hi")
    with pytest.raises(NotAllowed, match="no learning worker"):
        session.after_run(result)


def test_the_hosts_tool_policy_narrows_never_widens(store: Store) -> None:
    """P2: a tool is offered only when the configuration enables it and the host allows it."""
    _configure(store, remember=True)
    narrow = EngramSession.start(store, "maya", agent="helper", host_allows={"memory_search"})
    memory = [n for n in narrow.offered() if n.startswith("memory_")]
    assert memory == ["memory_recall", "memory_search"]
    wide = EngramSession.start(store, "maya", agent="helper", host_allows={"memory_forget"})
    assert "memory_forget" not in wide.offered()  # allowed by the host, not enabled
