"""Issue 16 item 4: the OpenAI Agents SDK `Session` over Engram's signed conversation log —
items in, the same items out, tool calls and results included; pop_item is an excision,
clear_session starts a new conversation; the person is the host's, never an item's (P3)."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest

from engram.adapters.openai_agents import EngramSession
from engram.control.conversations import delete_conversation
from engram.control.session import PersonSession
from engram.model.conversation import EntryKind
from engram.model.errors import InvalidInput, NotAllowed, NotFound
from engram.model.ids import ConversationId
from engram.runtime import conversations, history, session_log
from engram.runtime.response_items import REMOVED
from engram.store.store import Store
from engram.store.verify import verify

# What the SDK hands a session: the short and the long form of a user message (one with an
# image), a system message, a reasoning item, two tool calls (one answered with content
# parts), a result whose call this log never saw, and an assistant message with an
# annotation and a refusal part.
ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "What's the weather in Oslo?"},
    {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Here is the sky"},
            {
                "type": "input_image",
                "image_url": "data:image/png;base64,iVBORw0K",
                "detail": "auto",
            },
            {"type": "input_text", "text": "right now."},
        ],
    },
    {"role": "system", "content": "Answer briefly."},
    {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Hidden musing about umbrellas."}],
    },
    {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "weather",
        "arguments": '{"city": "Oslo"}',
        "status": "completed",
    },
]
LATER: list[dict[str, Any]] = [
    {"type": "function_call_output", "call_id": "call_1", "output": "3°C and snowing"},
    {
        "type": "function_call",
        "id": "fc_2",
        "call_id": "call_2",
        "name": "chart",
        "arguments": "{}",
    },
    {
        "type": "function_call_output",
        "call_id": "call_2",
        "output": [{"type": "input_text", "text": "chart drawn"}],
    },
    {"type": "function_call_output", "call_id": "call_elsewhere", "output": "orphan result"},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "text": "It is 3°C in Oslo.",
                "annotations": [
                    {
                        "type": "url_citation",
                        "url": "https://forecast.invalid/oslo",
                        "title": "Forecast",
                        "start_index": 0,
                        "end_index": 4,
                    }
                ],
                "logprobs": [],
            },
            {"type": "refusal", "refusal": "I will not guess tomorrow."},
        ],
    },
]


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


@pytest.fixture
def session(store: Store) -> EngramSession:
    return EngramSession.start(store, "maya", agent="helper")


def _filled(session: EngramSession) -> None:
    run(session.add_items(copy.deepcopy(ITEMS)))
    run(session.add_items(copy.deepcopy(LATER)))  # the first call's result comes later


def test_items_come_back_exactly_as_given(session: EngramSession, store: Store) -> None:
    """Round trip: every item, with ids, parts, annotations and reasoning, as the SDK gave it;
    `limit` gives the latest ones in order."""
    _filled(session)
    assert run(session.get_items()) == ITEMS + LATER
    assert run(session.get_items(limit=3)) == (ITEMS + LATER)[-3:]
    assert run(session.get_items(limit=0)) == []
    assert verify(store).ok


def test_visible_text_becomes_turns_and_tool_calls(session: EngramSession, store: Store) -> None:
    """Each item's visible text is a turn or a tool entry the history tools read; the user
    turns are the host's person's; reasoning and the system message are no turns (W8)."""
    _filled(session)
    turns = conversations.turns(store, session.session_id)
    assert [(e.kind, e.author, t) for e, t in turns] == [
        (EntryKind.USER, "maya", "What's the weather in Oslo?"),
        (EntryKind.USER, "maya", "Here is the sky\nright now."),
        (EntryKind.ASSISTANT, "helper", "It is 3°C in Oslo.\nI will not guess tomorrow."),
    ]
    calls = history.list_tool_calls(store, session.session_id)["calls"]
    assert [(c["name"], c["removed"]) for c in calls] == [("weather", False), ("chart", False)]
    found = history.find(store, session.session_id, "snowing", mode="pattern")
    assert [m["kind"] for m in found["matches"]] == ["tool_result"]
    result = history.read_tool_result(store, session.session_id, calls[0]["call_id"])
    assert result["result"] == "3°C and snowing"
    assert history.find(store, session.session_id, "umbrellas", mode="pattern")["matches"] == []


def test_what_only_the_session_needs_is_sealed(
    session: EngramSession, store: Store, store_path: Path
) -> None:
    """The envelopes (reasoning, annotations, images) are sealed like every payload."""
    _filled(session)
    store.close()
    raw = b"".join(p.read_bytes() for p in store_path.parent.glob(store_path.name + "*"))
    for secret in ("Hidden musing", "forecast.invalid", "iVBORw0K", "orphan result"):
        assert secret.encode() not in raw, secret


def test_pop_item_is_a_signed_excision(session: EngramSession, store: Store) -> None:
    """pop_item returns the latest item and the session no longer holds it; its text is gone
    from every reader (H5), the excision is in the signed log and verify passes."""
    _filled(session)
    popped = run(session.pop_item())
    assert popped == LATER[-1]
    assert run(session.get_items()) == ITEMS + LATER[:-1]
    assert history.find(store, session.session_id, "3°C in Oslo", mode="pattern")["matches"] == []
    assert [e.kind for e, _ in conversations.turns(store, session.session_id)][-1] is (
        EntryKind.ASSISTANT
    )  # the turn keeps its place in the chain, without its text
    assert conversations.turns(store, session.session_id)[-1][1] is None
    excision = [e for e, _ in conversations.transcript(store, session.session_id)][-1]
    assert excision.kind is EntryKind.EXCISION and excision.author == "agent:helper"
    assert run(session.pop_item()) == LATER[-2]  # an item with no entry of its own
    assert run(session.pop_item()) == LATER[-3]  # a tool result
    assert history.list_tool_calls(store, session.session_id)["calls"][1]["removed"] is True
    assert run(session.get_items()) == ITEMS + LATER[:2]
    assert verify(store).ok


def test_pop_item_of_an_empty_session_is_none(session: EngramSession) -> None:
    assert run(session.pop_item()) is None


def test_a_result_staff_removed_comes_back_as_a_notice(
    session: EngramSession, store: Store
) -> None:
    """H4: once staff excise a tool result, the session gives the model a notice, not it."""
    _filled(session)
    call = history.list_tool_calls(store, session.session_id)["calls"][0]["call_id"]
    conversations.excise_tool_result(
        store, session.session_id, call, actor="staff:dana", reason="pasted a password"
    )
    items = run(session.get_items())
    assert items[5] == {**LATER[0], "output": REMOVED}
    assert items[:5] == ITEMS and items[6:] == LATER[1:]


def test_clear_session_starts_a_new_conversation(session: EngramSession, store: Store) -> None:
    """clear_session: the session moves to a new conversation with the same people and
    agent; the old one stays whole in the person's history (deleting it is theirs to do)."""
    _filled(session)
    old = session.session_id
    run(session.clear_session())
    assert session.session_id != old
    assert run(session.get_items()) == []
    assert session_log.read_items(store, old) == ITEMS + LATER
    new = conversations.require_conversation(store, session.session_id)
    assert (new.participants, new.agent, new.surface) == (("maya",), "helper", new.surface)
    assert [c.id for c in conversations.conversations_of(store, "maya")] == [old, new.id]
    run(session.add_items([{"role": "user", "content": "A fresh start"}]))
    resumed = EngramSession.resume(store, "maya", session.session_id, agent="helper")
    assert run(resumed.get_items()) == [{"role": "user", "content": "A fresh start"}]


def test_the_person_is_the_hosts_never_an_items(session: EngramSession, store: Store) -> None:
    """P3: a user item is authored by the session's person whatever it says; a session for
    someone else's conversation is refused."""
    run(session.add_items([{"role": "user", "content": "hi", "name": "bob", "author": "bob"}]))
    ((entry, _),) = conversations.turns(store, session.session_id)
    assert entry.author == "maya"
    with pytest.raises(NotAllowed, match="not a participant"):
        EngramSession.resume(store, "bob", session.session_id, agent="helper")


@pytest.mark.parametrize(
    "bad",
    [
        {"role": "user", "content": "lone \ud800 surrogate"},
        {"role": "user", "content": "x" * (conversations.MAX_TURN_CHARS + 1)},
        {"type": "function_call", "call_id": "c", "name": " ", "arguments": "{}"},
        {"role": "user", "content": float("nan")},
    ],
    ids=["not-unicode", "too-long", "no-tool-name", "not-json"],
)
def test_a_bad_item_writes_nothing_of_its_batch(
    session: EngramSession, store: Store, bad: dict[str, Any]
) -> None:
    """Bad input: one sentence, and nothing of the batch is written."""
    with pytest.raises(InvalidInput) as refused:
        run(session.add_items([{"role": "user", "content": "fine"}, bad]))
    assert str(refused.value).endswith(".") and "\n" not in str(refused.value)
    assert run(session.get_items()) == []
    assert conversations.turns(store, session.session_id) == []


def test_a_deleted_conversation_is_said_in_one_sentence(
    session: EngramSession, store: Store
) -> None:
    """Bad input: once the person deletes the conversation (the inspector's cascade), the
    session's reads and writes say so, and nothing is written."""
    _filled(session)
    delete_conversation(PersonSession.open(store, "maya"), ConversationId(session.session_id))
    for attempt in (
        session.get_items(),
        session.add_items([{"role": "user", "content": "still there?"}]),
        session.pop_item(),
    ):
        with pytest.raises(NotFound, match=r"^There is no conversation 'c_\w+' in this store\.$"):
            run(attempt)
    assert verify(store).ok
