"""Issue 21 item 8: approve with an edit of text or scope in one write, and the notes a
suggestion would duplicate (control.candidate_review)."""

from __future__ import annotations

import pytest

from engram.control import candidates, notes
from engram.control.candidate_review import approve_edited, duplicates_of
from engram.control.forensics import audit_log
from engram.control.session import PersonSession
from engram.model.errors import Conflict, InvalidInput
from engram.model.events import Cause
from engram.model.ids import CandidateId, PersonId
from engram.model.notes import NoteStatus
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.note_writes import NoteDraft, suggestion
from engram.store import journal
from engram.store.store import Store

ANA = PersonId("ana")


def _suggest(store: Store, text: str) -> CandidateId:
    info = start_conversation(store, [ANA])
    turn = append_turn(store, info.id, role="user", author=ANA, text=text)
    draft = NoteDraft(text, Kind.FACT, Scope.DIRECT)
    candidate, event = suggestion(
        draft, "extractor", "rules", Cause(info.id, turn), sensitive=False, ambiguous=False
    )
    with store.write() as txn:
        journal.append(store, txn, ANA, [event])
    return candidate


def test_issue21_item8_approve_with_an_edit_is_one_write_of_the_same_events(
    store: Store,
) -> None:
    candidate = _suggest(store, "Lives in Osloo")
    dana = PersonSession.open(store, ANA, "staff:dana")
    before = len(audit_log(dana))
    done = approve_edited(dana, candidate, 1, text="Lives in Oslo", scope=Scope.PORTABLE)
    assert done["status"] == "applied"
    [view] = notes.list_notes(dana)
    assert (view.text, view.note.scope, str(view.note.id)) == (
        "Lives in Oslo",
        Scope.PORTABLE,
        done["applied_note"],
    )
    log = audit_log(dana)[before:]
    assert [r["type"] for r in log] == [
        "candidate_reviewed",
        "note_added",
        "candidate_applied",
        "corrected",
    ]
    assert {r["actor"] for r in log} == {"staff:dana"}
    closed = [v for v in notes.list_notes(dana, include_closed=True) if v.text == "Lives in Osloo"]
    assert [v.note.status for v in closed] == [NoteStatus.CORRECTED]  # the suggestion, kept


def test_issue21_item8_a_scope_only_edit_and_a_stale_revision(store: Store) -> None:
    first = _suggest(store, "Has a cat")
    dana = PersonSession.open(store, ANA, "staff:dana")
    done = approve_edited(dana, first, 1, scope=Scope.PORTABLE)
    [view] = notes.list_notes(dana)
    assert view.note.scope is Scope.PORTABLE and str(view.note.id) == done["applied_note"]
    assert audit_log(dana)[-1]["type"] == "scope_changed"
    second = _suggest(store, "Has a dog")
    candidates.reject(dana, second, 1, "Never said so")
    before = len(audit_log(dana))
    with pytest.raises(Conflict):
        approve_edited(dana, second, 1, text="Has two dogs")
    assert len(audit_log(dana)) == before  # nothing of it was written
    with pytest.raises(InvalidInput, match="Say what to change"):
        approve_edited(dana, second, 2)


def test_issue21_item8_the_notes_a_suggestion_would_duplicate(store: Store) -> None:
    start_conversation(store, [ANA])
    dana = PersonSession.open(store, ANA, "staff:dana")
    kept = notes.add_note(dana, "Likes  green tea", Kind.PREFERENCE, Scope.DIRECT)
    notes.add_note(dana, "Likes green tea a lot", Kind.PREFERENCE, Scope.DIRECT)
    gone = notes.add_note(dana, "likes green TEA", Kind.PREFERENCE, Scope.DIRECT)
    notes.delete_note(dana, gone)
    candidate = candidates.get_candidate(dana, _suggest(store, "Likes green tea"))
    assert [d["id"] for d in duplicates_of(dana, candidate)] == [kept]
    other = candidates.get_candidate(dana, _suggest(store, "Plays chess"))
    assert duplicates_of(dana, other) == []
