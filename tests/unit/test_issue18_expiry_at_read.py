"""Issue 18 item 4 (M3, H1): transient notes expire when they expire, and a new language
note changes stemming at once — neither waits for the maintenance pass."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.agents import AgentConfig
from engram.model.clock import ManualClock
from engram.model.ids import PersonId
from engram.model.scope import Durability, Kind, Scope
from engram.runtime.context import Attribution, assemble_turn, recall_turn
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.history import dispatch
from engram.runtime.memory_tools import dispatch as call_memory_tool
from engram.store import journal
from engram.store.store import Store

ANA = PersonId("ana")


def _session(store: Store) -> PersonSession:
    with store.write() as txn:
        journal.ensure_person(store, txn, ANA)
    return PersonSession(store, ANA, ANA)


def test_issue18_item4_M3_a_day_old_transient_note_is_served_by_no_read(
    store: Store, clock: ManualClock
) -> None:
    session = _session(store)
    info = start_conversation(store, [ANA])
    airport = add_note(
        session, "At the airport.", Kind.FACT, Scope.DIRECT, durability=Durability.TRANSIENT
    )
    add_note(session, "Lives in Porto.", Kind.FACT, Scope.DIRECT)
    clock.advance(timedelta(hours=24))  # and no maintenance pass has run
    turn = Attribution(ANA, info.id)
    assert "airport" not in assemble_turn(store, turn).block
    assert [t.text for t in recall_turn(store, turn).notes] == ["Lives in Porto."]
    config = AgentConfig.from_json("a", {"memory": {"tools": {"update": True}}})
    args = {"item_id": airport, "text": "At the gate."}
    answer: dict[str, Any] = call_memory_tool(
        store, turn, config, ["memory_update_item"], "memory_update_item", args
    )
    assert "no item" in answer["error"]


def test_issue18_item4_H1_a_new_language_note_changes_stemming_before_maintain(
    store: Store,
) -> None:
    session = _session(store)
    info = start_conversation(store, [ANA])
    sang = append_turn(store, info.id, role="user", author=ANA, text="Elle chantait le soir.")
    add_note(session, "Wants replies in French.", Kind.STYLE, Scope.PORTABLE, topic="language")
    # no maintain: the profile has not been rebuilt, the note alone decides
    answer: dict[str, Any] = dispatch(
        store, info.id, "conversation_find", {"query": "chanter", "limit": 25}
    )
    assert [m["turn_id"] for m in answer["matches"]] == [sang]
