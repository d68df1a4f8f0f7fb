"""The typed memory tools: exposure (P2), attribution (P3, W6), approval (W6), incognito
(W7) and the scope rule on everything they return (S1-S3)."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.control import candidates
from engram.control.notes import add_note, list_notes
from engram.control.session import PersonSession
from engram.model.agents import AgentConfig
from engram.model.ids import PersonId
from engram.model.notes import NoteStatus
from engram.model.scope import Kind, Scope
from engram.runtime.context import Attribution
from engram.runtime.conversations import start_conversation
from engram.runtime.memory_tools import dispatch, tool_definitions
from engram.store.store import Store

ANA, BEN = PersonId("ana"), PersonId("ben")
ALL_TOOLS = {"memory_search", "memory_remember", "memory_update_item", "memory_forget"}
CONFIG = AgentConfig.from_json(
    "helper",
    {"memory": {"tools": {"search": True, "remember": True, "update": True, "forget": True}}},
)


def _call(store: Store, where: Attribution, name: str, **args: Any) -> dict[str, Any]:
    return dispatch(store, where, CONFIG, ALL_TOOLS, name, args)


def _alone(store: Store, incognito: bool = False) -> Attribution:
    info = start_conversation(store, [ANA], agent="helper", incognito=incognito)
    return Attribution(ANA, info.id)


def _shared(store: Store) -> Attribution:
    return Attribution(ANA, start_conversation(store, [ANA, BEN], agent="helper").id)


def test_P2_only_tools_enabled_and_allowed_are_offered_or_run(store: Store) -> None:
    narrow = AgentConfig.from_json("helper", {"memory": {"tools": {"search": True}}})
    offered = tool_definitions(narrow, {"memory_search", "memory_forget"})
    assert [d["function"]["name"] for d in offered] == ["memory_search"]
    assert tool_definitions(CONFIG, set()) == []  # the host's policy is the ceiling
    where = _alone(store)
    refused = dispatch(store, where, narrow, ALL_TOOLS, "memory_forget", {"item_id": "n_x"})
    assert "not available" in refused["error"]


def test_W6_P3_remember_needs_approval_and_the_host_names_the_person(store: Store) -> None:
    where = _alone(store)
    start_conversation(store, [BEN])
    answer = _call(
        store, where, "memory_remember", text="Plays the cello.", kind="fact", person="ben"
    )
    assert answer["status"] == "pending"
    session = PersonSession(store, ANA, ANA)
    assert list_notes(session) == []  # nothing is kept before a person approves
    assert candidates.list_candidates(PersonSession(store, BEN, BEN)) == []
    (pending,) = candidates.list_candidates(session, "pending")
    assert pending["text"] == "Plays the cello." and pending["suggested_by"] == "agent:helper"
    assert pending["source"]["conversation"] == where.conversation
    candidates.approve(session, pending["id"], 1, apply_now=True)
    assert [v.text for v in list_notes(session)] == ["Plays the cello."]


def test_W7_an_incognito_conversation_cannot_ask_to_remember(store: Store) -> None:
    where = _alone(store, incognito=True)
    answer = _call(store, where, "memory_remember", text="Plays the cello.", kind="fact")
    assert "incognito" in answer["error"]
    assert candidates.list_candidates(PersonSession(store, ANA, ANA)) == []


def test_update_is_a_correction_for_review_and_forget_closes_the_note(store: Store) -> None:
    where = _alone(store)
    session = PersonSession(store, ANA, ANA)
    old = add_note(session, "Lives in Lyon.", Kind.FACT, Scope.DIRECT)
    found = _call(store, where, "memory_search", query="lyon")
    assert [i["item_id"] for i in found["items"]] == [old]
    _call(store, where, "memory_update_item", item_id=old, text="Lives in Porto.")
    (pending,) = candidates.list_candidates(session, "pending")
    assert pending["contradicts"] == old
    candidates.approve(session, pending["id"], 1, apply_now=True)
    (porto,) = list_notes(session)
    assert porto.text == "Lives in Porto."
    gone = _call(store, where, "memory_forget", item_id=porto.note.id)
    assert gone == {"item_id": porto.note.id, "forgotten": True}
    statuses = {v.text: v.note.status for v in list_notes(session, include_closed=True)}
    assert statuses == {
        "Lives in Lyon.": NoteStatus.ACTIVE,  # issue 11 item 7: the correction undone
        "Lives in Porto.": NoteStatus.DELETED,
    }


def test_S1_tools_cannot_see_or_touch_private_notes_in_a_shared_conversation(
    store: Store,
) -> None:
    where = _shared(store)
    session = PersonSession(store, ANA, ANA)
    private = add_note(session, "Has a cello lesson.", Kind.FACT, Scope.DIRECT)
    shared = add_note(session, "Plays the cello.", Kind.FACT, Scope.PORTABLE)
    found = _call(store, where, "memory_search", query="cello", limit=25)
    assert [i["item_id"] for i in found["items"]] == [shared]
    for tool in ("memory_forget", "memory_update_item"):
        extra = {"text": "x"} if tool == "memory_update_item" else {}  # forget takes no text
        refused = _call(store, where, tool, item_id=private, **extra)
        assert "no item" in refused["error"]
    assert list_notes(session)[0].note.status is NoteStatus.ACTIVE


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scopes=st.lists(st.sampled_from(list(Scope)), min_size=1, max_size=8))
def test_S2_no_private_note_ever_reaches_a_shared_audience_through_search(
    store: Store, scopes: list[Scope]
) -> None:
    person = PersonId(f"p_{uuid.uuid4().hex[:8]}")  # the store outlives one example
    where = Attribution(person, start_conversation(store, [person, BEN], agent="helper").id)
    session = PersonSession(store, person, person)
    for scope in scopes:
        add_note(session, f"Likes tea ({scope.value}).", Kind.PREFERENCE, scope)
    found = _call(store, where, "memory_search", query="tea", limit=25)
    visible = {v.note.id: v.note.scope for v in list_notes(session)}
    assert bool(found["items"]) == (Scope.PORTABLE in scopes)
    assert all(visible[i["item_id"]] is Scope.PORTABLE for i in found["items"])


def test_R2_empty_recall_names_the_writing_tool_this_agent_has_or_none(
    store: Store, cli: Any
) -> None:
    """Issue 11 item 4: the empty answer names memory_remember when this agent may use it,
    and no tool at all when it may not (there is no memory_write here)."""
    from engram.mcp.tools import bind, call
    from engram.runtime.agents import set_agent

    set_agent(store, "writer", {"memory": {"tools": {"remember": True}}}, "ops")
    set_agent(store, "reader", {"memory": {"tools": {"search": True}}}, "ops")
    writes = start_conversation(store, [ANA], agent="writer")
    reads = start_conversation(store, [ANA], agent="reader")

    def recalled(conversation: str, allow: set[str] | None) -> str:
        answer = call(bind(store, ANA, conversation, None, allow), "memory_recall", {})
        assert answer["status"] == "empty"
        return str(answer["message"])

    named = recalled(writes.id, None)
    assert named.startswith("nothing has been kept about this person yet")
    assert "memory_remember" in named and "memory_write" not in named
    for conversation, allow in ((reads.id, None), (writes.id, {"memory_search"})):
        message = recalled(conversation, allow)  # not enabled, or not allowed by the host
        assert message == "nothing has been kept about this person yet"
    store.close()
    assert "memory_remember" in cli("recall", "--person", "ana", "--conversation", writes.id).out
    assert "memory_" not in cli("recall", "--person", "ana", "--conversation", reads.id).out
