"""Issue 18 item 5, C4: a person deletes a shared conversation for themself; deleting it for
everyone is a staff action whose preview names each person; pending suggestions from a
deleted conversation are rejected with the reason; the preview lists the closed notes whose
words the deletion shreds."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from engram.control import candidates, forensics, notes
from engram.control.conversations import delete_conversation, preview_delete
from engram.control.session import PersonSession
from engram.engine.fold import fold
from engram.model.errors import NotAllowed
from engram.model.events import Cause, EventType
from engram.model.ids import CandidateId, ConversationId, NoteId, PersonId
from engram.model.notes import PersonMemory
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import (
    append_turn,
    conversations_of,
    start_conversation,
    turns,
)
from engram.runtime.note_writes import NoteDraft, learn_note, suggestion
from engram.store import journal, projection_memory
from engram.store.store import Store
from engram.store.verify import verify

ANA, BEN = PersonId("ana"), PersonId("ben")
REASON = "the conversation it came from was deleted"  # the words, not the constant


@dataclass
class Shared:
    conversation: ConversationId
    anas_note: NoteId
    anas_closed: NoteId
    bens_note: NoteId
    anas_candidate: CandidateId
    bens_candidate: CandidateId


def _suggest(store: Store, person: PersonId, text: str, cause: Cause) -> CandidateId:
    draft = NoteDraft(text, Kind.FACT, Scope.DIRECT)
    candidate, event = suggestion(
        draft, "extractor", "rules", cause, sensitive=False, ambiguous=False
    )
    with store.write() as txn:
        journal.append(store, txn, person, [event])
    return candidate


def _shared(store: Store) -> Shared:
    """Ana and Ben talk; each has a note and a pending suggestion from it, Ana a note she
    already deleted (its words still in her history)."""
    info = start_conversation(store, [ANA, BEN])
    c = info.id
    t_ana = append_turn(store, c, role="user", author=ANA, text="I'm Ana, I live in Oslo.")
    append_turn(store, c, role="assistant", author="assistant", text="Hello Ana.")
    t_ben = append_turn(store, c, role="user", author=BEN, text="I'm Ben, a pilot.")
    append_turn(store, c, role="assistant", author="assistant", text="Hello Ben.")
    oslo = learn_note(store, ANA, NoteDraft("Lives in Oslo", Kind.FACT, Scope.DIRECT), c, t_ana)
    gone = learn_note(store, ANA, NoteDraft("Is called Ana", Kind.FACT, Scope.DIRECT), c, t_ana)
    notes.delete_note(PersonSession.open(store, ANA), gone)
    pilot = learn_note(store, BEN, NoteDraft("Is a pilot", Kind.FACT, Scope.PORTABLE), c, t_ben)
    anas = _suggest(store, ANA, "Likes fjords", Cause(c, t_ana))
    bens = _suggest(store, BEN, "Flies on Mondays", Cause(c, t_ben))
    return Shared(c, oslo, gone, pilot, anas, bens)


def _replay_equals_projection(store: Store, person: PersonId) -> None:
    with store.read() as conn:
        replayed = fold(journal.events(conn, person), PersonMemory(person))
        assert projection_memory.matches_replay(conn, person, replayed)
        assert projection_memory.unscoped_memory(conn, person) == replayed


def _journal(store: Store, person: PersonId) -> list[tuple[int, str, str]]:
    with store.read() as conn:
        return [(e.seq, e.type.value, e.actor) for e in journal.events(conn, person)]


def _bens_view(store: Store) -> tuple[list[tuple[str, str | None]], list[dict[str, object]]]:
    ben = PersonSession.open(store, BEN)
    return (
        [(v.note.id, v.text) for v in notes.list_notes(ben)],
        candidates.list_candidates(ben),
    )


def test_issue18_item5_C4_a_person_deletes_a_shared_conversation_for_themself(
    store: Store,
) -> None:
    """Ana's delete excises her turns, closes and shreds her notes from it, rejects her
    pending suggestion from it with the reason; Ben keeps the conversation, his turns, his
    notes and his suggestion exactly as they were; both journals replay to their
    projections."""
    s = _shared(store)
    ana = PersonSession.open(store, ANA)
    bens_before, bens_journal = _bens_view(store), _journal(store, BEN)

    preview = preview_delete(ana, s.conversation)
    assert preview.for_everyone is False and preview.keeping == (BEN,)
    assert [v.note.id for v in preview.cascade.closes] == [s.anas_note]
    assert [(v.note.id, v.text) for v in preview.cascade.shreds] == [
        (s.anas_closed, "Is called Ana")
    ]
    assert [(c.id, c.text) for c in preview.cascade.rejects] == [(s.anas_candidate, "Likes fjords")]
    assert preview.others == () and preview.others_closing == 0
    assert "Is a pilot" not in str(preview.to_json())  # nothing of Ben's is shown to Ana

    done = delete_conversation(ana, s.conversation)
    assert done.done and done.report["turns_excised"] == 1
    assert done.to_json()["kept_by"] == [BEN]
    # Ana: her note closed with its words gone, the closed one's words gone too
    assert notes.show_note(ana, s.anas_note)["status"] == "deleted"
    assert notes.show_note(ana, s.anas_note)["text"] is None
    assert notes.show_note(ana, s.anas_closed)["text"] is None
    assert conversations_of(store, ANA) == []
    said_in_audit = [r["action"] for r in forensics.audit_log(ana)]
    assert "deleted their part of a shared conversation (their turns): 1 note closed" in (
        said_in_audit
    )
    (rejected,) = [c for c in candidates.list_candidates(ana) if c["id"] == s.anas_candidate]
    assert rejected["status"] == "rejected"
    assert candidates.audit(ana, s.anas_candidate)[-1]["reason"] == REASON
    # Ben: untouched
    assert _bens_view(store) == bens_before
    assert _journal(store, BEN) == bens_journal
    assert [info.id for info in conversations_of(store, BEN)] == [s.conversation]
    said = [text for entry, text in turns(store, s.conversation) if entry.author != "assistant"]
    assert said == [None, "I'm Ben, a pilot."]  # Ana's words excised, Ben's kept
    for person in (ANA, BEN):
        _replay_equals_projection(store, person)
    report = verify(store)
    assert report.ok, report.problems


def test_issue18_item5_C4_a_persons_delete_leaves_the_others_notes_and_turns(
    store: Store,
) -> None:
    """The bug itself: Ana's delete used to close Ben's notes and remove his turns."""
    s = _shared(store)
    bens_before = _bens_view(store)
    delete_conversation(PersonSession.open(store, ANA), s.conversation)
    assert _bens_view(store) == bens_before
    said = [text for entry, text in turns(store, s.conversation) if entry.author == BEN]
    assert said == ["I'm Ben, a pilot."]


def test_issue18_item5_C4_a_person_asking_to_delete_for_everyone_is_refused(
    store: Store,
) -> None:
    s = _shared(store)
    ana = PersonSession.open(store, ANA)
    before = (_journal(store, ANA), _journal(store, BEN))
    for ask in (preview_delete, delete_conversation):
        with pytest.raises(NotAllowed) as refused:
            ask(ana, s.conversation, for_everyone=True)
        assert str(refused.value) == (
            f"The conversation of {store.now():%-d %b} with ana and ben is shared with ben, "
            "so only support staff may delete it for everyone; delete it for yourself, or "
            "ask support to."
        )
    assert (_journal(store, ANA), _journal(store, BEN)) == before
    assert [i.id for i in conversations_of(store, BEN)] == [s.conversation]


def test_issue18_item5_C4_staff_delete_for_everyone_naming_each_person(store: Store) -> None:
    """For everyone: the preview names Ana and Ben, each with what closes, what is shredded
    and which suggestion is rejected; each journal records the staff member, never Ana, as
    the one who acted; replay equals the projection for both."""
    s = _shared(store)
    staff = PersonSession.open(store, ANA, "staff:dana")
    preview = preview_delete(staff, s.conversation, for_everyone=True)
    assert [c.person for c in preview.people] == [ANA, BEN]
    mine, bens = preview.people
    assert [v.note.id for v in mine.closes] == [s.anas_note]
    assert [v.note.id for v in mine.shreds] == [s.anas_closed]
    assert [v.note.id for v in bens.closes] == [s.bens_note]
    assert [c.id for c in bens.rejects] == [s.bens_candidate]
    assert preview.others_closing == 1 and preview.keeping == ()
    assert [p["person"] for p in preview.to_json()["people"]] == [ANA, BEN]

    delete_conversation(staff, s.conversation, for_everyone=True)
    assert conversations_of(store, ANA) == conversations_of(store, BEN) == []
    ben = PersonSession.open(store, BEN)
    assert notes.list_notes(ben) == []
    assert candidates.audit(ben, s.bens_candidate)[-1]["reason"] == REASON
    with store.read() as conn:
        for person in (ANA, BEN):
            acted = {
                e.actor
                for e in journal.events(conn, person)
                if e.type in (EventType.CONVERSATION_DELETED, EventType.CANDIDATE_REVIEWED)
            }
            assert acted == {"staff:dana"}
    for person in (ANA, BEN):
        _replay_equals_projection(store, person)
    assert verify(store).ok


def test_issue18_item5_C4_a_conversation_only_they_had_is_deleted_as_before(store: Store) -> None:
    """Alone in it, a person's delete removes the conversation; its pending suggestion is
    rejected with the reason in the same write (it used to stay pending, its words gone)."""
    info = start_conversation(store, [ANA])
    turn = append_turn(store, info.id, role="user", author=ANA, text="I swim at dawn.")
    candidate = _suggest(store, ANA, "Swims at dawn", Cause(info.id, turn))
    ana = PersonSession.open(store, ANA)
    delete_conversation(ana, info.id)
    assert conversations_of(store, ANA) == []
    assert candidates.get_candidate(ana, candidate)["status"] == "rejected"
    assert candidates.audit(ana, candidate)[-1]["reason"] == REASON
    _replay_equals_projection(store, ANA)
    assert verify(store).ok
