"""Memory control C1, C2, C4, C5 on a real store, plus time travel and the audit log."""

from __future__ import annotations

from datetime import timedelta

import pytest

from engram.control import notes
from engram.control.conversations import delete_conversation, preview_delete
from engram.control.forensics import audit_log, export_person
from engram.control.session import PersonSession
from engram.model.clock import ManualClock
from engram.model.errors import InvalidInput, NotAllowed, NotFound
from engram.model.ids import ConversationId, PersonId
from engram.model.notes import NoteStatus
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.note_writes import NoteDraft, learn_note, restate
from engram.store.store import Store
from engram.store.verify import verify

ANA, BEN = PersonId("ana"), PersonId("ben")


@pytest.fixture
def ana(store: Store) -> PersonSession:
    start_conversation(store, [ANA])
    start_conversation(store, [BEN])
    return PersonSession.open(store, ANA)


def test_C1_operations_act_only_on_the_resolved_person(store: Store, ana: PersonSession) -> None:
    ben = PersonSession.open(store, BEN)
    bens_note = notes.add_note(ben, "Ben's secret", Kind.FACT, Scope.DIRECT)
    for attempt in (
        lambda: notes.show_note(ana, bens_note),
        lambda: notes.edit_note(ana, bens_note, text="hijacked"),
        lambda: notes.delete_note(ana, bens_note),
    ):
        with pytest.raises(NotFound, match="for ana"):
            attempt()
    assert [v.text for v in notes.list_notes(ben)] == ["Ben's secret"]
    assert notes.list_notes(ana) == []
    with pytest.raises(NotFound):
        PersonSession.open(store, "nobody")


def test_C2_delete_closes_the_interval_and_keeps_the_record(ana: PersonSession) -> None:
    note = notes.add_note(ana, "Has a cat", Kind.FACT, Scope.DIRECT)
    notes.delete_note(ana, note, reason="Not true any more")
    assert notes.list_notes(ana) == []
    [kept] = notes.list_notes(ana, include_closed=True)
    assert kept.note.status is NoteStatus.DELETED and kept.note.valid_to is not None
    assert kept.text == "Has a cat"
    log = audit_log(ana)
    assert log[-1]["action"] == f"deleted note {note}" and log[-1]["reason"] == "Not true any more"
    with pytest.raises(NotAllowed, match="already closed"):
        notes.delete_note(ana, note)


def test_C5_an_edit_is_a_new_version_and_the_old_is_closed(ana: PersonSession) -> None:
    old = notes.add_note(ana, "Likes tea", Kind.PREFERENCE, Scope.UNSPECIFIED)
    new = notes.edit_note(ana, old, text="Likes green tea")
    assert new != old
    detail = notes.show_note(ana, new)
    assert [v["text"] for v in detail["versions"]] == ["Likes tea", "Likes green tea"]
    assert [v["status"] for v in detail["versions"]] == ["corrected", "active"]
    assert detail["versions"][0]["valid_to"] == detail["valid_from"]
    assert detail["versions"][0]["closed_by"]["note"] == new
    # a scope-only change stays on the same note and is in its history
    assert notes.edit_note(ana, new, scope=Scope.PORTABLE) == new
    assert notes.show_note(ana, new)["history"][-1]["type"] == "scope_changed"
    with pytest.raises(InvalidInput):
        notes.edit_note(ana, new)


def test_C4_deleting_a_conversation_closes_what_it_taught_and_nothing_it_corroborated(
    store: Store, ana: PersonSession
) -> None:
    first = start_conversation(store, [ANA])
    second = start_conversation(store, [ANA])
    t1 = append_turn(store, first.id, role="user", author=ANA, text="I live in Oslo and swim")
    t2 = append_turn(store, second.id, role="user", author=ANA, text="I still swim")
    oslo = learn_note(store, ANA, NoteDraft("Lives in Oslo", Kind.FACT, Scope.DIRECT), first.id, t1)
    swims = learn_note(store, ANA, NoteDraft("Swims", Kind.FACT, Scope.DIRECT), second.id, t2)
    restate(store, ANA, swims, first.id, t1)  # the first conversation corroborates "Swims"
    restate(store, ANA, oslo, second.id, t2)  # a later conversation corroborates "Oslo"

    preview = preview_delete(ana, first.id)
    assert [v.note.id for v in preview.cascade.closes] == [oslo]
    assert [v.note.id for v in preview.cascade.survives] == [swims]
    assert notes.get_note(ana, oslo).is_active  # a preview changes nothing

    delete_conversation(ana, first.id)
    closed = notes.show_note(ana, oslo)
    assert closed["status"] == "deleted"
    # the corroborating conversation cannot keep the text alive
    assert closed["text"] is None
    survivor = notes.get_note(ana, swims)
    assert survivor.is_active and survivor.corroborators == ()
    report = verify(store)
    assert report.ok, report.problems


def test_C4_deletion_for_everyone_by_staff_reaches_every_participant(
    store: Store, ana: PersonSession
) -> None:
    shared = start_conversation(store, [ANA, BEN])
    turn = append_turn(store, shared.id, role="user", author=BEN, text="I'm Ben, a pilot")
    learn_note(store, BEN, NoteDraft("Is a pilot", Kind.FACT, Scope.PORTABLE), shared.id, turn)
    staff = PersonSession.open(store, ANA, "staff:dana")
    assert preview_delete(staff, shared.id, for_everyone=True).others_closing == 1
    delete_conversation(staff, shared.id, for_everyone=True)
    ben = PersonSession.open(store, BEN)
    assert notes.list_notes(ben) == []
    with pytest.raises(NotAllowed):
        preview_delete(PersonSession.open(store, BEN), start_conversation(store, [ANA]).id)


def test_time_travel_shows_a_deleted_note_as_active_before_its_deletion(
    store: Store, ana: PersonSession, clock: ManualClock
) -> None:
    note = notes.add_note(ana, "Is in Rome this week", Kind.FACT, Scope.DIRECT)
    middle = clock.now()
    clock.advance(timedelta(hours=1))
    notes.delete_note(ana, note)
    [then] = notes.list_notes(ana, as_of=middle)
    assert then.note.id == note and then.note.is_active
    assert notes.list_notes(ana) == []
    assert notes.list_notes(ana, as_of=middle - timedelta(days=1)) == []


def test_actions_record_their_actor(store: Store, ana: PersonSession) -> None:
    staff = PersonSession.open(store, ANA, "staff:dana")
    note = notes.add_note(ana, "Speaks Norwegian", Kind.STYLE, Scope.PORTABLE)
    notes.edit_note(staff, note, scope=Scope.DIRECT)
    actors = [(row["actor"], row["type"]) for row in audit_log(ana)][-2:]
    assert actors == [("ana", "note_added"), ("staff:dana", "scope_changed")]


def test_export_holds_everything_kept(store: Store, ana: PersonSession) -> None:
    conversation = start_conversation(store, [ANA])
    append_turn(store, conversation.id, role="user", author=ANA, text="hello there")
    notes.add_note(ana, "Likes hiking", Kind.PREFERENCE, Scope.PORTABLE)
    data = export_person(ana)
    assert data["person"] == "ana"
    assert [n["text"] for n in data["notes"]] == ["Likes hiking"]
    texts = [t["text"] for c in data["conversations"] for t in c["turns"]]
    assert "hello there" in texts
    assert data["audit"]


def test_bad_input_gets_one_sentence(ana: PersonSession) -> None:
    with pytest.raises(InvalidInput, match="needs some text"):
        notes.add_note(ana, "   ", Kind.FACT, Scope.DIRECT)
    with pytest.raises(InvalidInput, match="at most 2,000"):
        notes.add_note(ana, "x" * 5000, Kind.FACT, Scope.DIRECT)
    with pytest.raises(InvalidInput, match="basis points"):
        notes.add_note(ana, "ok", Kind.FACT, Scope.DIRECT, confidence_bp=20_000)
    with pytest.raises(NotFound):
        notes.show_note(ana, "n_doesnotexist")
    with pytest.raises(NotAllowed, match="no longer exists"):
        notes.add_note(ana, "ok", Kind.FACT, Scope.DIRECT, conversation=ConversationId("c_missing"))
