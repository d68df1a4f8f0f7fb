"""Issue 21 item 8, last part: decisions on candidates can be undone through the journal.

Undoing an approval (plain, applied, with an edit) takes back the note it made and puts the
candidate back in the queue, pending; undoing a rejection puts it back pending. Each undo
is one `undone` event naming the candidate; replay gives the same state as the store's
projection; an undo refuses in one sentence if the note changed or the candidate was
decided again since.
"""

from __future__ import annotations

import pytest

from engram.control import candidates, notes, undo
from engram.control.candidate_review import approve_edited
from engram.control.forensics import audit_log
from engram.control.session import PersonSession
from engram.engine.fold import fold
from engram.model.errors import Conflict, StateConflict
from engram.model.event_bodies import Undone
from engram.model.events import Cause, EventType
from engram.model.ids import CandidateId, NoteId, PersonId
from engram.model.notes import NoteStatus, PersonMemory
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.note_writes import NoteDraft, learn_note, suggestion
from engram.store import journal, projection_memory
from engram.store.store import Store
from engram.store.verify import verify

ANA = PersonId("ana")


def _suggest(
    store: Store,
    text: str,
    *,
    contradicts: NoteId | None = None,
    restates: NoteId | None = None,
) -> CandidateId:
    info = start_conversation(store, [ANA])
    turn = append_turn(store, info.id, role="user", author=ANA, text=text)
    draft = NoteDraft(text, Kind.FACT, Scope.DIRECT)
    candidate, event = suggestion(
        draft,
        "extractor",
        "rules",
        Cause(info.id, turn),
        sensitive=False,
        ambiguous=False,
        contradicts=contradicts,
        restates=restates,
    )
    with store.write() as txn:
        journal.append(store, txn, ANA, [event])
    return candidate


@pytest.fixture
def dana(store: Store) -> PersonSession:
    start_conversation(store, [ANA])
    return PersonSession.open(store, ANA, "staff:dana")


def _undo_last(session: PersonSession, since: int) -> undo.Undone:
    change = undo.last_change(session, since)
    assert change is not None
    return undo.undo(session, change.seq, since)


def _replays_the_same(store: Store) -> None:
    """F5: the journal folds, whole and split at every point, to the store's projection."""
    with store.read() as conn:
        events = list(journal.events(conn, ANA))
        whole = fold(events, PersonMemory(ANA))
        assert projection_memory.matches_replay(conn, ANA, whole)
        assert projection_memory.unscoped_memory(conn, ANA) == whole
    for cut in range(len(events) + 1):
        assert fold(events[cut:], fold(events[:cut], PersonMemory(ANA))) == whole, cut
    assert verify(store).ok


def test_issue21_item8_undoing_an_approval_removes_its_note_and_requeues_the_candidate(
    store: Store, dana: PersonSession
) -> None:
    candidate = _suggest(store, "Lives in Oslo")
    since = undo.session_start(dana)
    made = candidates.approve(dana, candidate, 1, apply_now=True)["applied_note"]
    change = undo.last_change(dana, since)
    assert change is not None and change.label == "Undo approval of “Lives in Oslo”"
    assert change.candidate == candidate
    done = undo.undo(dana, change.seq, since)
    assert (done.candidate, done.note) == (candidate, NoteId(made))
    again = candidates.get_candidate(dana, candidate)
    assert (again["status"], again["revision"], again["note"]) == ("pending", 4, None)
    assert notes.list_notes(dana) == []
    assert notes.get_note(dana, made).status is NoteStatus.DELETED
    assert audit_log(dana)[-1]["type"] == "undone"
    trail = candidates.audit(dana, candidate)
    assert trail[-1]["decision"] == "approval undone" and trail[-1]["actor"] == "staff:dana"
    assert undo.last_change(dana, since) is None  # one step back, once
    _replays_the_same(store)
    with pytest.raises(Conflict):  # a decision against the revision before the undo is stale
        candidates.approve(dana, candidate, 3)
    candidates.approve(dana, candidate, 4, apply_now=True)  # decided afresh
    assert [v.text for v in notes.list_notes(dana)] == ["Lives in Oslo"]


def test_issue21_item8_undoing_a_rejection_and_an_approval_not_applied(
    store: Store, dana: PersonSession
) -> None:
    rejected = _suggest(store, "Has a dog")
    approved = _suggest(store, "Has a cat")
    since = undo.session_start(dana)
    candidates.reject(dana, rejected, 1, "Never said so")
    change = undo.last_change(dana, since)
    assert change is not None and change.label == "Undo rejection of “Has a dog”"
    _undo_last(dana, since)
    assert candidates.get_candidate(dana, rejected)["status"] == "pending"
    candidates.approve(dana, approved, 1)
    _undo_last(dana, since)
    assert candidates.get_candidate(dana, approved)["status"] == "pending"
    assert notes.list_notes(dana) == []
    _replays_the_same(store)


def test_issue21_item8_undoing_an_approval_with_an_edit_takes_back_the_whole_approval(
    store: Store, dana: PersonSession
) -> None:
    candidate = _suggest(store, "Lives in Osloo")
    since = undo.session_start(dana)
    approve_edited(dana, candidate, 1, text="Lives in Oslo", scope=Scope.PORTABLE)
    change = undo.last_change(dana, since)
    # Not the edit alone: the approval it was part of.
    assert change is not None and change.action == "approve"
    assert change.label == "Undo approval of “Lives in Osloo”"
    undo.undo(dana, change.seq, since)
    assert candidates.get_candidate(dana, candidate)["status"] == "pending"
    assert notes.list_notes(dana) == []
    scoped = _suggest(store, "Has a cat")
    approve_edited(dana, scoped, 1, scope=Scope.PORTABLE)
    _undo_last(dana, since)
    assert candidates.get_candidate(dana, scoped)["status"] == "pending"
    assert notes.list_notes(dana) == []
    _replays_the_same(store)


def test_issue21_item8_what_an_approval_contradicted_or_restated_comes_back(
    store: Store, dana: PersonSession
) -> None:
    conversation = start_conversation(store, [ANA]).id
    turn = append_turn(store, conversation, role="user", author=ANA, text="Lives in Lyon")
    lyon = learn_note(
        store, ANA, NoteDraft("Lives in Lyon", Kind.FACT, Scope.DIRECT), conversation, turn
    )
    since = undo.session_start(dana)
    moved = _suggest(store, "Lives in Grenoble", contradicts=lyon)
    candidates.approve(dana, moved, 1, apply_now=True)
    assert notes.get_note(dana, lyon).status is NoteStatus.CONTRADICTED
    _undo_last(dana, since)
    assert notes.get_note(dana, lyon).is_active  # what was known before holds again
    assert [v.text for v in notes.list_notes(dana)] == ["Lives in Lyon"]

    sources = notes.get_note(dana, lyon).sources
    again = _suggest(store, "Lives in Lyon", restates=lyon)
    candidates.approve(dana, again, 1, apply_now=True)
    assert len(notes.get_note(dana, lyon).sources) == len(sources) + 1
    done = _undo_last(dana, since)
    assert done.note == lyon
    back = notes.get_note(dana, lyon)
    assert back.is_active and back.sources == sources  # the restatement's source taken back
    assert candidates.get_candidate(dana, again)["status"] == "pending"
    _replays_the_same(store)


def test_issue21_item8_an_undo_refuses_when_the_note_or_the_candidate_changed_since(
    store: Store, dana: PersonSession
) -> None:
    lee = PersonSession.open(store, ANA, "staff:lee")
    since = undo.session_start(dana)
    edited = _suggest(store, "Works as a nurse")
    made = candidates.approve(dana, edited, 1, apply_now=True)["applied_note"]
    notes.edit_note(lee, made, text="Works as a midwife")  # someone else, since
    change = undo.last_change(dana, since)
    assert change is not None
    before = len(audit_log(dana))
    with pytest.raises(StateConflict, match=r"^The note the approval of “Works as a nurse” made"):
        undo.undo(dana, change.seq, since)
    assert len(audit_log(dana)) == before  # nothing was written

    decided = _suggest(store, "Has a cat")
    candidates.approve(dana, decided, 1)
    candidates.apply(lee, decided)  # decided on again, by someone else
    change = undo.last_change(dana, since)
    assert change is not None and change.candidate == decided
    with pytest.raises(StateConflict, match="was decided again since"):
        undo.undo(dana, change.seq, since)
    assert len(audit_log(dana)) == before + 4  # the approval, note, application: no undo
    assert candidates.get_candidate(dana, decided)["status"] == "applied"


def test_issue21_item8_the_undo_event_names_the_candidate_and_reads_back(
    store: Store, dana: PersonSession
) -> None:
    candidate = _suggest(store, "Has a cat")
    since = undo.session_start(dana)
    made = candidates.approve(dana, candidate, 1, apply_now=True)["applied_note"]
    done = _undo_last(dana, since)
    with store.read() as conn:
        event = journal.event_at(conn, ANA, done.seq)
    assert event is not None and event.type is EventType.UNDONE
    body = event.body
    assert isinstance(body, Undone)
    assert (body.candidate, body.action, body.note) == (candidate, "approve", made)
    assert Undone.from_json(body.to_json()) == body
    # An undo of a note's change still writes exactly the keys it always did.
    assert set(Undone(3, "rescope", note=NoteId("n"), scope=Scope.DIRECT).to_json()) == {
        "undoes",
        "action",
        "note",
        "scope",
    }
