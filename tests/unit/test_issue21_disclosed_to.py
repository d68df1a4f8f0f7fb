"""Issue 21 item 6: a note's detail lists every turn, audience and agent that received it,
from the usage ledger (control.disclosure, through notes.show_note)."""

from __future__ import annotations

from engram.control import notes
from engram.control.conversations import delete_conversation
from engram.control.session import PersonSession
from engram.model.events import Cause
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.context import record_use
from engram.runtime.conversations import append_turn, start_conversation
from engram.store.store import Store

ANA, BEN = PersonId("ana"), PersonId("ben")


def test_issue21_item6_every_turn_audience_and_agent_that_received_the_note(
    store: Store,
) -> None:
    alone = start_conversation(store, [ANA], agent="coach")
    shared = start_conversation(store, [ANA, BEN], agent="helper")
    gone = start_conversation(store, [ANA], agent="coach")
    ana = PersonSession.open(store, ANA)
    note = notes.add_note(ana, "Likes green tea", Kind.PREFERENCE, Scope.PORTABLE)
    t1 = append_turn(store, alone.id, role="user", author=ANA, text="What should I drink?")
    t2 = append_turn(store, shared.id, role="user", author=BEN, text="What does Ana like?")
    t3 = append_turn(store, gone.id, role="user", author=ANA, text="Tea?")
    record_use(store, ANA, [note], "assembly", Cause(alone.id, t1))
    record_use(store, ANA, [note], "recall", Cause(shared.id, t2))
    record_use(store, ANA, [note], "search", Cause(gone.id, t3))
    record_use(store, ANA, [note], "recall", None)  # a session bound to the person alone
    before = notes.show_note(ana, note)["disclosed"]
    assert [u["turn"] for u in before] == [t1, t2, t3, None]
    delete_conversation(ana, gone.id)
    disclosed = notes.show_note(ana, note)["disclosed"]
    assert len(disclosed) == 4 == len(notes.show_note(ana, note)["usage"])
    first, second, third, fourth = disclosed
    assert (first["agent"], first["audience"], first["readers"]) == (
        "coach",
        "subject_alone",
        "ana alone",
    )
    assert first["how"] == "put in what the agent saw for a turn" and first["seen"]
    assert (second["agent"], second["audience"], second["readers"]) == (
        "helper",
        "shared",
        "ana and ben",
    )
    assert second["how"] == "returned when the agent recalled memory"
    assert (second["conversation"], second["turn"]) == (shared.id, t2)
    assert not third["conversation_kept"] and not third["seen"]  # its conversation went
    assert third["how"] == "found by the agent's memory search"
    assert fourth["conversation"] is None and not fourth["seen"]
