"""Undo of a decision on a candidate (issue 21 item 8): an approval — plain, applied, or
with an edit — or a rejection, reversed by one `undone` event through the journal.

control.undo finds the actor's last change; when it is a decision on a candidate (the
review, the application, or the edit an approval with edit made, which names the
candidate), this module says what it was and writes its undo: the candidate pending again
in the queue, the note the approval made closed (or the source its restatement added taken
back), and what that note had contradicted reopened, as after a deletion. It refuses in one
sentence, writing nothing, when the candidate was decided again since or the note the
approval made changed since.
"""

from __future__ import annotations

from dataclasses import dataclass

from engram.control import candidates as candidate_control
from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.control.wording import quoted
from engram.model.errors import StateConflict
from engram.model.event_bodies import (
    CandidateApplied,
    CandidateReviewed,
    Corrected,
    Restated,
    ScopeChanged,
    Undone,
    body_as,
    candidate_named,
)
from engram.model.events import Event, NewEvent
from engram.model.events import EventType as E
from engram.model.ids import CandidateId, NoteId
from engram.runtime.note_writes import read_suggestion, reopened_after
from engram.store import journal, projection_state
from engram.store.store import WriteTxn

# The events a decision on a candidate is (an edit counts when it names one).
DECISION_EVENTS = (E.CANDIDATE_REVIEWED, E.CANDIDATE_APPLIED)
_ABOUT_CANDIDATES = (E.CANDIDATE_REVIEWED, E.CANDIDATE_APPLIED, E.UNDONE, E.REVIEW_IMPORTED)


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision on a candidate an undo would reverse, and the suggestion's words."""

    candidate: CandidateId
    action: str  # "approve" | "reject"
    text: str | None


def decided(change: Event) -> CandidateId | None:
    """The candidate a change decided on, if it is a decision (None: a change to a note)."""
    body = change.body
    if isinstance(body, CandidateReviewed | CandidateApplied):
        return body.candidate
    if isinstance(body, Corrected | ScopeChanged):
        return body.candidate  # the edit of an approval with edit, or None
    return None


def _action(change: Event) -> str:
    body = change.body
    if isinstance(body, CandidateReviewed) and body.decision == "rejected":
        return "reject"
    return "approve"


def decision(session: PersonSession, change: Event) -> Decision:
    """What the decision `change` was, with the words of the suggestion it was about."""
    candidate = decided(change)
    assert candidate is not None
    text = candidate_control.get_candidate(session, candidate).get("text")
    return Decision(candidate, _action(change), text)


def undo_events(txn: WriteTxn, session: PersonSession, change: Event) -> list[NewEvent]:
    """The events that undo the decision `change` (inside the caller's locked write), or
    StateConflict, in one sentence, when it cannot be undone any more."""
    candidate = decided(change)
    assert candidate is not None
    person, conn = session.person, txn.conn
    state = projection_state.candidate(conn, person, candidate)
    assert state is not None  # a decision names a candidate there is
    about = [
        e
        for e in journal.events_of_types(conn, person, _ABOUT_CANDIDATES)
        if candidate_named(e.body) == candidate
    ]
    named = quoted(read_suggestion(_sealed(txn, session, state.payload_seq)).text)
    if any(e.seq > change.seq for e in about) or state.status == "pending":
        raise StateConflict(
            f"The suggestion {named} was decided again since, so undoing that decision "
            "would overwrite a later one; nothing was undone."
        )
    action = _action(change)
    body = Undone(change.seq, action, candidate=candidate)
    if state.status != "applied":
        return [NewEvent(E.UNDONE, session.actor, body)]
    applied = next(e for e in reversed(about) if e.type is E.CANDIDATE_APPLIED)
    made = body_as(applied.body, CandidateApplied).note
    held = change.body.note if isinstance(change.body, Corrected | ScopeChanged) else made
    restatement = _restatement(txn, session, applied, made)
    if restatement is not None and held != made:
        raise StateConflict(
            f"The approval of {named} edited a note that was there before it, so it cannot "
            "be undone as one step; nothing was undone."
        )
    note = memory_control.note_in(txn, session, held)
    if note is None or not note.is_active or any(c.seq > change.seq for c in note.changes):
        raise StateConflict(
            f"The note the approval of {named} made changed since, so undoing it would "
            "overwrite a later change; nothing was undone."
        )
    body = Undone(change.seq, action, note=held, candidate=candidate, restatement=restatement)
    events = [NewEvent(E.UNDONE, session.actor, body)]
    if restatement is None:  # what the approval's note had contradicted comes back
        events += reopened_after(conn, person, list(dict.fromkeys([made, held])), session.actor)
    return events


def _sealed(txn: WriteTxn, session: PersonSession, seq: int) -> str | None:
    return journal.texts(session.store, txn.conn, session.person, [seq]).get(seq)


def _restatement(txn: WriteTxn, session: PersonSession, applied: Event, note: NoteId) -> int | None:
    """The position of the restatement an application was (it adds a source to `note`,
    written just before the application), or None when it made a new note."""
    before = journal.event_at(txn.conn, session.person, applied.seq - 1)
    restated = before is not None and before.type is E.RESTATED
    if restated and before is not None and body_as(before.body, Restated).note == note:
        return before.seq
    return None
