"""Candidate review (P5, P6): list, inspect, approve, reject, apply — all audited.

Approve and reject carry the revision the reviewer saw; if someone else decided first, the
decision fails with a conflict instead of overwriting theirs. Applying is its own step:
only an approved candidate becomes a note, through the same journal and fold as any
other write (W1).
"""

from __future__ import annotations

from typing import Any

from engram.control.notes import note_in
from engram.control.session import PersonSession
from engram.model.errors import Conflict, InvalidInput, NotAllowed, NotFound
from engram.model.events import Cause, Event, EventType, NewEvent
from engram.model.ids import CandidateId, ConversationId, NoteId, TurnId
from engram.model.notes import CandidateState, NoteStatus
from engram.runtime.note_writes import draft_of_suggestion, note_added, writable_conversation
from engram.store import journal, projection
from engram.store.store import WriteTxn

STATUSES = ("pending", "approved", "rejected", "applied")
MAX_REASON_CHARS = 1_000
_CANDIDATE_EVENTS = (
    EventType.CANDIDATE_SUGGESTED,
    EventType.CANDIDATE_REVIEWED,
    EventType.CANDIDATE_APPLIED,
)


def list_candidates(session: PersonSession, status: str | None = None) -> list[dict[str, Any]]:
    """The person's candidates, oldest first, with their text."""
    if status is not None and status not in STATUSES:
        raise InvalidInput(f"{status!r} is not a candidate status; use {', '.join(STATUSES)}.")
    store, person = session.store, session.person
    with store.read() as conn:
        states = projection.candidates(conn, person, status)
        suggested = {s.id: journal.event_at(conn, person, s.payload_seq) for s in states}
        texts = journal.texts(store, conn, person, [s.payload_seq for s in states])
    return [_json(s, suggested[s.id], texts.get(s.payload_seq)) for s in states]


def get_candidate(session: PersonSession, candidate_id: str) -> dict[str, Any]:
    """One candidate in full."""
    store, person = session.store, session.person
    with store.read() as conn:
        state = _found(
            session, candidate_id, projection.candidate(conn, person, CandidateId(candidate_id))
        )
        event = journal.event_at(conn, person, state.payload_seq)
        text = journal.texts(store, conn, person, [state.payload_seq]).get(state.payload_seq)
    return _json(state, event, text)


def audit(session: PersonSession, candidate_id: str) -> list[dict[str, Any]]:
    """Every decision about a candidate: who, when, what, and why (P6)."""
    store, person = session.store, session.person
    with store.read() as conn:
        _found(session, candidate_id, projection.candidate(conn, person, CandidateId(candidate_id)))
        events = [
            e
            for e in journal.events_of_types(conn, person, _CANDIDATE_EVENTS)
            if e.body.get("candidate") == candidate_id
        ]
        reasons = journal.texts(
            store,
            conn,
            person,
            [e.seq for e in events if e.type is EventType.CANDIDATE_REVIEWED and e.has_payload],
        )
    return [
        {
            "seq": e.seq,
            "at": e.at.isoformat(),
            "actor": e.actor,
            "event": e.type.value,
            **{k: e.body[k] for k in ("revision", "decision", "note") if k in e.body},
            **({"reason": reasons[e.seq]} if e.seq in reasons else {}),
        }
        for e in events
    ]


def approve(
    session: PersonSession, candidate_id: str, revision: int, *, apply_now: bool = False
) -> dict[str, Any]:
    """Approve the revision the reviewer saw; with `apply_now`, apply it right after."""
    _review(session, candidate_id, revision, "approved", None)
    if apply_now:
        return apply(session, candidate_id)
    return get_candidate(session, candidate_id)


def reject(session: PersonSession, candidate_id: str, revision: int, reason: str) -> dict[str, Any]:
    """Reject the revision the reviewer saw, saying why (the reason is sealed)."""
    reason = reason.strip()
    if not reason:
        raise InvalidInput("Say why the candidate is rejected (--reason).")
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidInput(f"The reason may hold at most {MAX_REASON_CHARS:,} characters.")
    _review(session, candidate_id, revision, "rejected", reason)
    return get_candidate(session, candidate_id)


def apply(session: PersonSession, candidate_id: str) -> dict[str, Any]:
    """Turn an approved candidate into a note (or a restatement); a separate step (P6)."""
    store, person = session.store, session.person
    with store.write() as txn:
        state = _found(
            session, candidate_id, projection.candidate(txn.conn, person, CandidateId(candidate_id))
        )
        if state.status != "approved":
            raise NotAllowed(
                f"Candidate {candidate_id} is {state.status}; only an approved candidate is "
                "applied."
            )
        suggested = journal.event_at(txn.conn, person, state.payload_seq)
        assert suggested is not None
        text = journal.texts(store, txn.conn, person, [state.payload_seq])[state.payload_seq]
        origin = suggested.body.get("origin")
        if origin:
            _still_learnable(txn, session, ConversationId(origin), candidate_id)
        if text is None:
            raise NotAllowed(
                f"Candidate {candidate_id}'s text is gone (its conversation was deleted); it "
                "cannot be applied."
            )
        events, note = _apply_events(txn, session, state, suggested, text)
        try:
            journal.append(store, txn, person, events)
        except NotAllowed as refusal:
            raise Conflict(f"Candidate {candidate_id} no longer applies: {refusal}") from None
    return {**get_candidate(session, candidate_id), "applied_note": note}


def _review(
    session: PersonSession, candidate_id: str, revision: int, decision: str, reason: str | None
) -> None:
    store, person = session.store, session.person
    with store.write() as txn:
        state = _found(
            session, candidate_id, projection.candidate(txn.conn, person, CandidateId(candidate_id))
        )
        if state.revision != revision:
            raise Conflict(
                f"Candidate {candidate_id} is at revision {state.revision}, not {revision}: "
                "someone else decided first; reload it and decide again."
            )
        if state.status != "pending":
            raise NotAllowed(f"Candidate {candidate_id} is already {state.status}.")
        body = {"candidate": candidate_id, "revision": revision, "decision": decision}
        event = NewEvent(EventType.CANDIDATE_REVIEWED, session.actor, body, None, reason)
        journal.append(store, txn, person, [event])


def _still_learnable(
    txn: WriteTxn, session: PersonSession, conversation: ConversationId, candidate_id: str
) -> None:
    """W4 and W7 at apply time too: a deleted or now-incognito conversation teaches nothing."""
    try:
        writable_conversation(txn, session.person, conversation)
    except NotAllowed as refusal:
        raise NotAllowed(f"Candidate {candidate_id} cannot be applied: {refusal}") from None


def _apply_events(
    txn: WriteTxn, session: PersonSession, state: CandidateState, suggested: Event, text: str
) -> tuple[list[NewEvent], NoteId]:
    body = suggested.body
    cause = suggested.cause or (
        Cause(ConversationId(body["origin"])) if body.get("origin") else None
    )
    if cause and body.get("source", {}).get("turn"):
        cause = Cause(cause.conversation, TurnId(body["source"]["turn"]))
    target = body.get("restates") or body.get("contradicts")
    held = note_in(txn, session, NoteId(target)) if target else None
    target_open = held is not None and held.status is NoteStatus.ACTIVE
    applied = {"candidate": state.id}
    if body.get("restates") and target_open:
        assert held is not None
        restated = NewEvent(
            EventType.RESTATED,
            session.actor,
            {"note": held.id, **({"source": cause.to_json()} if cause else {})},
            cause,
        )
        done = NewEvent(EventType.CANDIDATE_APPLIED, session.actor, {**applied, "note": held.id})
        return [restated, done], held.id
    draft = draft_of_suggestion(body, text)
    origin = ConversationId(body["origin"]) if body.get("origin") else None
    added = note_added(draft, session.actor, cause, origin)
    note = NoteId(str(added.body["note"]))
    events = [added]
    if body.get("contradicts") and target_open:  # a target closed since needs no closing
        events.append(
            NewEvent(EventType.CONTRADICTED, session.actor, {"old": target, "new": note}, cause)
        )
    events.append(NewEvent(EventType.CANDIDATE_APPLIED, session.actor, {**applied, "note": note}))
    return events, note


def _found(
    session: PersonSession, candidate_id: str, state: CandidateState | None
) -> CandidateState:
    if state is None:
        raise NotFound(f"{session.person} has no candidate {candidate_id!r}.")
    return state


def _json(state: CandidateState, suggested: Event | None, text: str | None) -> dict[str, Any]:
    body = suggested.body if suggested else {}
    return {
        "id": state.id,
        "revision": state.revision,
        "status": state.status,
        "kind": state.kind.value,
        "scope": state.scope.value,
        "durability": body.get("durability"),
        "confidence_bp": body.get("confidence_bp"),
        "text": text,
        "source": body.get("source"),
        "restates": body.get("restates"),
        "contradicts": body.get("contradicts"),
        "sensitive": bool(body.get("sensitive")),
        "ambiguous": bool(body.get("ambiguous")),
        "extractor": body.get("extractor"),
        "suggested_at": suggested.at.isoformat() if suggested else None,
        "suggested_by": suggested.actor if suggested else None,
        "note": state.note,
    }
