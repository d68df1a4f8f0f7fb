"""Deletion edge cases (issue 11 item 7), on a real store: C4 with edited notes, and F1
undone when the newer side of a contradiction is deleted."""

from __future__ import annotations

from datetime import timedelta

import pytest

from engram.control import notes
from engram.control.conversations import delete_conversation, preview_delete
from engram.control.session import PersonSession
from engram.control.wording import day
from engram.model.clock import ManualClock
from engram.model.events import EventType
from engram.model.ids import ConversationId, NoteId, PersonId
from engram.model.notes import NoteStatus
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, require_conversation, start_conversation
from engram.runtime.note_writes import NoteDraft, contradict, learn_note, restate
from engram.store import journal
from engram.store.store import Store
from engram.store.verify import verify

ANA = PersonId("ana")


@pytest.fixture
def ana(store: Store) -> PersonSession:
    start_conversation(store, [ANA])
    return PersonSession.open(store, ANA)


def _learn(store: Store, text: str) -> tuple[ConversationId, NoteId]:
    info = start_conversation(store, [ANA])
    turn = append_turn(store, info.id, role="user", author=ANA, text=text)
    return info.id, learn_note(store, ANA, NoteDraft(text, Kind.FACT, Scope.DIRECT), info.id, turn)


def _newer(store: Store, old: NoteId, text: str) -> tuple[ConversationId, NoteId]:
    """A note learned in a new conversation that contradicts `old` (F1)."""
    info = start_conversation(store, [ANA])
    turn = append_turn(store, info.id, role="user", author=ANA, text=text)
    draft = NoteDraft(text, Kind.FACT, Scope.DIRECT)
    return info.id, contradict(store, ANA, old, draft, info.id, turn)


def _status(session: PersonSession, note: NoteId) -> NoteStatus:
    return notes.get_note(session, note).status


def _events(store: Store) -> list[EventType]:
    with store.read() as conn:
        return [e.type for e in journal.events(conn, ANA)]


def test_C4_cascade_preview_gives_each_note_its_true_reason(
    store: Store, ana: PersonSession
) -> None:
    """Issue 11 item 7, decided: a note the person edited survives deletion of the
    conversation it was learned in (its text is now the person's edit, sealed under their
    key alone). The preview used to say "it only corroborated them" of every survivor; each
    note now carries its own, true reason."""
    here, learned = _learn(store, "I live in Oslo.")
    edited_from = learn_note(
        store, ANA, NoteDraft("Swims on Sundays.", Kind.FACT, Scope.DIRECT), here, None
    )
    elsewhere, corroborated = _learn(store, "I play chess.")
    restate(store, ANA, corroborated, here, None)
    own = notes.add_note(ana, "Likes tea.", Kind.PREFERENCE, Scope.DIRECT)
    restate(store, ANA, own, here, None)
    edited = notes.edit_note(ana, edited_from, text="Swims on Saturdays.")

    preview = preview_delete(ana, here)
    started = require_conversation(store, elsewhere).created_at  # named by day, not id
    closes = {c.note.id: c.reason for c in preview.cascade.closes}
    survives = {c.note.id: c.reason for c in preview.cascade.survives}
    assert closes == {learned: "its text comes from this conversation, so it goes with it"}
    assert survives == {
        edited: (
            "it was learned here, but its text is now an edit by ana, which this "
            "conversation does not hold; it loses this conversation as a source"
        ),
        corroborated: (
            f"its text comes from the conversation of {day(started)} with ana; this one only "
            "restated it, so it loses this conversation as a source"
        ),
        own: (
            "its text was written by ana, not taken from this conversation, which only "
            "restated it; it loses this conversation as a source"
        ),
    }
    as_json = preview.to_json()
    assert {n["id"]: n["reason"] for n in as_json["survives"]} == survives
    assert as_json["reopens"] == []

    # and what the preview says is what happens
    done = delete_conversation(ana, here)
    assert {c.note.id for c in done.cascade.survives} == set(survives)
    assert _status(ana, learned) is NoteStatus.DELETED
    kept = notes.show_note(ana, edited)
    assert kept["status"] == "active" and kept["text"] == "Swims on Saturdays."
    assert kept["sources"] == []
    assert notes.show_note(ana, edited_from)["text"] is None  # the learned words are gone
    assert verify(store).ok


def test_F1_deleting_the_newer_side_of_a_contradiction_reopens_the_older(
    store: Store, ana: PersonSession, clock: ManualClock
) -> None:
    """Issue 11 item 7, decided: deleting the note that contradicted another reopens the
    older one with a new `reopened` event, so deleting a wrong correction restores what was
    known before; the journal keeps both steps, and time travel still shows the gap."""
    _, oslo = _learn(store, "I live in Oslo.")
    _, bergen = _newer(store, oslo, "I live in Bergen.")
    assert _status(ana, oslo) is NoteStatus.CONTRADICTED
    while_contradicted = clock.now()
    clock.advance(timedelta(hours=1))

    notes.delete_note(ana, bergen, "that was wrong")
    assert _events(store)[-2:] == [EventType.DELETED, EventType.REOPENED]
    reopened = notes.show_note(ana, oslo)
    assert reopened["status"] == "active" and reopened["valid_to"] is None
    assert reopened["closed_by"] is None and reopened["text"] == "I live in Oslo."
    [change] = [h for h in reopened["history"] if h["type"] == "reopened"]
    assert change["detail"].startswith(f"contradicted by {bergen} at ")
    assert [v.note.id for v in notes.list_notes(ana)] == [oslo]
    [then] = [v for v in notes.list_notes(ana, as_of=while_contradicted) if v.note.id == bergen]
    assert then.note.is_active  # time travel: the past stays as it was
    report = verify(store)
    assert report.ok, report.problems


def test_F1_C4_deleting_the_conversation_of_the_newer_side_reopens_the_older(
    store: Store, ana: PersonSession
) -> None:
    """Issue 11 item 7: the same through a conversation's deletion, shown in the preview."""
    _, oslo = _learn(store, "I live in Oslo.")
    there, bergen = _newer(store, oslo, "I live in Bergen.")
    preview = preview_delete(ana, there)
    assert [c.note.id for c in preview.cascade.closes] == [bergen]
    [reopens] = preview.cascade.reopens
    assert reopens.note.id == oslo and reopens.text == "I live in Oslo."
    assert reopens.reason == (
        "“I live in Bergen.”, which contradicted it, goes with this conversation, so what was "
        "known before holds again"
    )
    assert preview.to_json()["reopens"][0]["id"] == oslo
    assert _status(ana, oslo) is NoteStatus.CONTRADICTED  # a preview changes nothing
    delete_conversation(ana, there)
    assert _status(ana, oslo) is NoteStatus.ACTIVE
    assert _status(ana, bergen) is NoteStatus.DELETED
    assert verify(store).ok


def test_F1_a_note_whose_text_is_gone_never_reopens_but_what_it_contradicted_can(
    store: Store, ana: PersonSession
) -> None:
    """Issue 11 item 7: only a note whose text still exists can come back. Oslo is
    contradicted by Bergen, Bergen by Trondheim; Bergen's conversation is deleted (its text
    goes), then Trondheim is deleted: Oslo, the last statement still readable, reopens."""
    _, oslo = _learn(store, "I live in Oslo.")
    bergen_talk, bergen = _newer(store, oslo, "I live in Bergen.")
    _, trondheim = _newer(store, bergen, "I live in Trondheim.")
    delete_conversation(ana, bergen_talk)  # Bergen is already closed: nothing reopens yet
    assert _status(ana, oslo) is NoteStatus.CONTRADICTED
    notes.delete_note(ana, trondheim)
    assert _status(ana, bergen) is NoteStatus.CONTRADICTED  # its text is gone for good
    assert _status(ana, oslo) is NoteStatus.ACTIVE
    assert [v.text for v in notes.list_notes(ana)] == ["I live in Oslo."]
    assert verify(store).ok


def test_F1_both_sides_from_one_conversation_leave_nothing_to_reopen(
    store: Store, ana: PersonSession
) -> None:
    """Issue 11 item 7: when the conversation held both statements, both texts go."""
    here, oslo = _learn(store, "I live in Oslo.")
    turn = append_turn(store, here, role="user", author=ANA, text="No, Bergen now.")
    draft = NoteDraft("Lives in Bergen.", Kind.FACT, Scope.DIRECT)
    bergen = contradict(store, ANA, oslo, draft, here, turn)
    assert preview_delete(ana, here).cascade.reopens == ()
    delete_conversation(ana, here)
    assert _status(ana, oslo) is NoteStatus.CONTRADICTED
    assert _status(ana, bergen) is NoteStatus.DELETED
    assert EventType.REOPENED not in _events(store)


def test_C5_deleting_an_edit_does_not_bring_back_the_version_before_it(
    store: Store, ana: PersonSession
) -> None:
    """Issue 11 item 7, decided: only contradictions are undone. An edit is the person's
    own decision about a statement; deleting the edited version deletes the statement."""
    _, oslo = _learn(store, "I live in Oslo.")
    edited = notes.edit_note(ana, oslo, text="I live in Oslo, Norway.")
    notes.delete_note(ana, edited)
    assert _status(ana, oslo) is NoteStatus.CORRECTED
    assert notes.list_notes(ana) == []
    assert EventType.REOPENED not in _events(store)
