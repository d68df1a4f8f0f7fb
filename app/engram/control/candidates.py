"""Candidate review (P5, P6): list, inspect, approve, reject, apply — all audited.

Approve and reject carry the revision the reviewer saw; if someone else decided first, the
decision fails with a conflict instead of overwriting theirs. Applying is its own step:
only an approved candidate becomes a note, through the same journal and fold as any
other write (W1). Each decision is one write that holds the person's journal while it
checks and appends, so two reviewers in two processes cannot both win.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from engram.control import notes as memory_control
from engram.control import wording
from engram.control.session import PersonSession
from engram.model.agents import auto_apply_sentence
from engram.model.errors import Conflict, InvalidInput, NotAllowed, NotFound, StateConflict
from engram.model.event_bodies import (
    CandidateApplied,
    CandidateReviewed,
    CandidateSuggested,
    EventBody,
    ReviewImported,
    Undone,
    body_as,
    candidate_named,
)
from engram.model.events import Event, EventType, NewEvent
from engram.model.ids import CandidateId, ConversationId, NoteId
from engram.model.notes import CandidateState
from engram.runtime.note_writes import read_suggestion, writable_conversation
from engram.store import agent_configs, conversation_log, journal, projection_state
from engram.store.store import WriteTxn

STATUSES = ("pending", "approved", "rejected", "applied")
MAX_REASON_CHARS = 1_000
UNDONE_DECISIONS = {"approve": "approval", "reject": "rejection"}  # an undo names them so
_CANDIDATE_EVENTS = (
    EventType.CANDIDATE_SUGGESTED,
    EventType.CANDIDATE_REVIEWED,
    EventType.CANDIDATE_APPLIED,
    EventType.REVIEW_IMPORTED,  # an offline reviewer's decision, come back (issue 21)
    EventType.UNDONE,  # a decision on it undone (issue 21 item 8); other undos name none
)


def list_candidates(session: PersonSession, status: str | None = None) -> list[dict[str, Any]]:
    """The person's candidates, oldest first, with their text and flags."""
    if status is not None and status not in STATUSES:
        raise InvalidInput(f"{status!r} is not a candidate status; use {', '.join(STATUSES)}.")
    with session.store.read() as conn:
        states = projection_state.candidates(conn, session.person, status)
        return _with_suggestions(session, conn, states)


def every_candidate(session: PersonSession, conn: Any, page: int) -> Iterator[dict[str, Any]]:
    """`list_candidates` (every status) read `page` at a time inside a snapshot the caller
    holds, so an export holds one page of them at once."""
    after = 0
    while states := projection_state.candidates(conn, session.person, after_seq=after, limit=page):
        yield from _with_suggestions(session, conn, states)
        after = states[-1].payload_seq


def _with_suggestions(
    session: PersonSession, conn: Any, states: list[CandidateState]
) -> list[dict[str, Any]]:
    store, person = session.store, session.person
    suggested = {s.id: journal.event_at(conn, person, s.payload_seq) for s in states}
    sealed = journal.texts(store, conn, person, [s.payload_seq for s in states])
    return [_json(s, suggested[s.id], sealed.get(s.payload_seq)) for s in states]


def count_candidates(session: PersonSession, status: str | None = None) -> int:
    """How many candidates a person has (in one status): no text is opened."""
    with session.store.read() as conn:
        return len(projection_state.candidates(conn, session.person, status))


def get_candidate(session: PersonSession, candidate_id: str) -> dict[str, Any]:
    """One candidate in full."""
    store, person = session.store, session.person
    with store.read() as conn:
        state = _found(
            session, candidate_id, projection_state.candidate(conn, person, _id(candidate_id))
        )
        event = journal.event_at(conn, person, state.payload_seq)
        sealed = journal.texts(store, conn, person, [state.payload_seq]).get(state.payload_seq)
        found = _json(state, event, sealed)
        found["automatic_policy"] = _automatic_policy(store, conn, event)
    # The notes it would replace or restate, by their words (issue 17 item 13).
    related = [NoteId(found[k]) for k in ("contradicts", "restates") if found.get(k)]
    if related:
        texts = memory_control.texts_of(session, memory_control.notes_by_ids(session, related))
        for key in ("contradicts", "restates"):
            if found.get(key):
                found[f"{key}_text"] = texts.get(NoteId(found[key]))
    return found


def _automatic_policy(store: Any, conn: Any, suggested: Event | None) -> str | None:
    """P5: what the agent of the candidate's conversation may apply without review, in a
    sentence; None when it came from no conversation with a configured agent."""
    origin = body_as(suggested.body, CandidateSuggested).origin if suggested else None
    info = conversation_log.get(conn, ConversationId(str(origin))) if origin else None
    config = agent_configs.get(store, conn, info.agent) if info and info.agent else None
    return f"Agent {config.name!r}: {auto_apply_sentence(config)}" if config else None


def audit(session: PersonSession, candidate_id: str) -> list[dict[str, Any]]:
    """Every decision about a candidate: who, when, what, and why (P6)."""
    store, person = session.store, session.person
    with store.read() as conn:
        _found(session, candidate_id, projection_state.candidate(conn, person, _id(candidate_id)))
        events = [
            e
            for e in journal.events_of_types(conn, person, _CANDIDATE_EVENTS)
            if candidate_named(e.body) == candidate_id
        ]
        reviewed = [e.seq for e in events if e.type is EventType.CANDIDATE_REVIEWED]
        reasons = journal.texts(store, conn, person, reviewed)
    return [
        {
            "seq": e.seq,
            "at": e.at.isoformat(),
            "actor": e.actor,
            "event": e.type.value,
            **_decided(e.body),
            **({"reason": reasons[e.seq]} if reasons.get(e.seq) else {}),
        }
        for e in events
    ]


def _decided(body: EventBody) -> dict[str, Any]:
    """What an audit row says was decided: a review's revision and decision, the note an
    application became."""
    if isinstance(body, CandidateReviewed):
        return {"revision": body.revision, "decision": body.decision}
    if isinstance(body, CandidateApplied):
        return {"note": body.note}
    if isinstance(body, Undone) and body.candidate is not None:
        return {"decision": f"{UNDONE_DECISIONS.get(body.action, body.action)} undone"}
    if isinstance(body, ReviewImported):
        return {
            "decision": body.decision,
            "outcome": body.outcome,
            "reviewed_offline": body.decided_at,
        }
    return {}


def approve(
    session: PersonSession, candidate_id: str, revision: int, *, apply_now: bool = False
) -> dict[str, Any]:
    """Approve the revision the reviewer saw; with `apply_now`, apply it in the same write,
    so either both happen or neither does."""
    with session.store.write() as txn:
        _review(txn, session, candidate_id, revision, "approved", None)
        note = _apply(txn, session, candidate_id) if apply_now else None
    answer = get_candidate(session, candidate_id)
    return {**answer, "applied_note": note} if apply_now else answer


def reject(session: PersonSession, candidate_id: str, revision: int, reason: str) -> dict[str, Any]:
    """Reject the revision the reviewer saw, saying why (the reason is sealed)."""
    reason = reason.strip()
    if not reason:
        raise InvalidInput("Say why the candidate is rejected.")
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidInput(f"The reason may hold at most {MAX_REASON_CHARS:,} characters.")
    with session.store.write() as txn:
        _review(txn, session, candidate_id, revision, "rejected", reason)
    return get_candidate(session, candidate_id)


def apply(session: PersonSession, candidate_id: str) -> dict[str, Any]:
    """Turn an approved candidate into a note (or a restatement); a separate step (P6)."""
    with session.store.write() as txn:
        note = _apply(txn, session, candidate_id)
    return {**get_candidate(session, candidate_id), "applied_note": note}


def _locked_state(txn: WriteTxn, session: PersonSession, candidate_id: str) -> CandidateState:
    journal.lock(txn, session.person)  # first: what is read next cannot change under us
    found = projection_state.candidate(txn.conn, session.person, _id(candidate_id))
    return _found(session, candidate_id, found)


def _review(
    txn: WriteTxn,
    session: PersonSession,
    candidate_id: str,
    revision: int,
    decision: str,
    reason: str | None,
) -> None:
    state = _locked_state(txn, session, candidate_id)
    if state.revision != revision:
        raise Conflict(
            f"The suggestion {_named(txn, session, state)} changed since it was shown "
            f"(revision {state.revision}, not {revision}): someone else decided first; "
            "reload it and decide again."
        )
    if state.status != "pending":
        raise StateConflict(
            f"The suggestion {_named(txn, session, state)} is already {state.status}."
        )
    body = CandidateReviewed(CandidateId(candidate_id), revision, decision)
    event = NewEvent(EventType.CANDIDATE_REVIEWED, session.actor, body, None, reason)
    journal.append(session.store, txn, session.person, [event])


def _apply(txn: WriteTxn, session: PersonSession, candidate_id: str) -> str:
    store, person = session.store, session.person
    state = _locked_state(txn, session, candidate_id)
    if state.status != "approved":
        raise StateConflict(
            f"The suggestion {_named(txn, session, state)} is {state.status}; only an approved "
            "suggestion is applied."
        )
    suggested = journal.event_at(txn.conn, person, state.payload_seq)
    assert suggested is not None
    sealed = journal.texts(store, txn.conn, person, [state.payload_seq])[state.payload_seq]
    text = read_suggestion(sealed).text
    origin = body_as(suggested.body, CandidateSuggested).origin
    if origin:
        try:  # W4 and W7 at apply time too
            writable_conversation(txn, person, origin)
        except NotAllowed as refusal:
            raise NotAllowed(
                f"The suggestion {wording.quoted(text)} cannot be applied: {refusal}"
            ) from None
    if text is None:
        raise NotAllowed(
            "The suggestion's text is gone (its conversation was deleted); it cannot be applied."
        )
    events, note = memory_control.candidate_note_events(txn, session, suggested, text)
    events.append(
        NewEvent(EventType.CANDIDATE_APPLIED, session.actor, CandidateApplied(state.id, note))
    )
    journal.append(store, txn, person, events)
    return note


def _id(candidate_id: str) -> CandidateId:
    return CandidateId(candidate_id)


def _found(
    session: PersonSession, candidate_id: str, state: CandidateState | None
) -> CandidateState:
    if state is None:
        raise NotFound(f"{session.person} has no candidate {candidate_id!r}.")
    return state


def _named(txn: WriteTxn, session: PersonSession, state: CandidateState) -> str:
    """A suggestion by its words, for the sentences people read (never its id)."""
    sealed = journal.texts(session.store, txn.conn, session.person, [state.payload_seq])
    return wording.quoted(read_suggestion(sealed.get(state.payload_seq)).text)


def _json(state: CandidateState, suggested: Event | None, sealed: str | None) -> dict[str, Any]:
    body = body_as(suggested.body, CandidateSuggested) if suggested else None
    opened = read_suggestion(sealed)
    source = body.source if body else None
    return {
        "id": state.id,
        "revision": state.revision,
        "status": state.status,
        "kind": state.kind.value,
        "scope": state.scope.value,
        "durability": body.durability.value if body and body.durability else None,
        "confidence_bp": body.confidence_bp if body else None,
        "text": opened.text,
        "source": source.to_json() if source else None,
        "restates": body.restates if body else None,
        "contradicts": body.contradicts if body else None,
        "sensitive": opened.sensitive,
        "ambiguous": opened.ambiguous,
        "category": opened.category,
        "sensitivity_reason": opened.reason,
        "imported": opened.imported,  # file, format, line or mem0 id (issue 21 item 10)
        "extractor": body.extractor if body else None,
        "suggested_at": suggested.at.isoformat() if suggested else None,
        "suggested_by": suggested.actor if suggested else None,
        "note": state.note,
    }
