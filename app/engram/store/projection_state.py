"""Reads of a person's projection beside the notes: how far it has folded (seqs), the
digest, the usage ledger, processed turns, deleted conversations and learning candidates.

None of these hands out a note, so none is scope-restricted; notes are read through
projection_notes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Connection, Row, func, select

from engram.model.clock import from_micros
from engram.model.ids import CandidateId, ConversationId, NoteId, PersonId, TurnId
from engram.model.notes import CandidateState, DigestLine, Usage
from engram.model.scope import Audience, Scope
from engram.store import schema
from engram.store.projection_rows import candidate_from_row, usage_from_row


def recent_digest(conn: Connection, person: PersonId, limit: int) -> list[DigestLine]:
    """Every scope's digest lines, newest first: for the inspector and the projection's own
    checks; prompt-facing code reads `eligible_digest` (tests/unit/test_scope.py)."""
    return _digest(conn, person, limit, None)


def eligible_digest(conn: Connection, audience: Audience, limit: int) -> list[DigestLine]:
    """The subject's newest digest lines this audience may receive (S2), newest first."""
    return _digest(conn, audience.subject, limit, audience.scopes)


def _digest(
    conn: Connection, person: PersonId, limit: int, scopes: Iterable[Scope] | None
) -> list[DigestLine]:
    D = schema.digest_lines
    query = select(D).where(D.c.person == person)
    if scopes is not None:
        query = query.where(D.c.scope.in_([s.value for s in scopes]))
    rows = conn.execute(query.order_by(D.c.seq.desc()).limit(limit))
    return [_digest_line(r) for r in rows]


def digested_conversations(conn: Connection, person: PersonId) -> set[ConversationId]:
    """The conversations that already have a digest line for this person (M4: one each)."""
    D = schema.digest_lines
    rows = conn.execute(
        select(D.c.conversation).where(D.c.person == person, D.c.conversation.is_not(None))
    )
    return {ConversationId(str(c)) for c in rows.scalars()}


def digest_after(
    conn: Connection, person: PersonId, after_seq: int, limit: int
) -> list[DigestLine]:
    """One page of the digest, oldest first: the first `limit` lines after event
    `after_seq`."""
    D = schema.digest_lines
    query = select(D).where(D.c.person == person, D.c.seq > after_seq)
    rows = conn.execute(query.order_by(D.c.seq).limit(limit))
    return [_digest_line(r) for r in rows]


def _digest_line(r: Row[Any]) -> DigestLine:
    return DigestLine(
        r.seq,
        from_micros(r.at),
        ConversationId(r.conversation) if r.conversation else None,
        Scope(r.scope),
    )


def usage_count(conn: Connection, person: PersonId) -> int:
    """How many uses of a person's notes the ledger holds (one per note per turn or tool)."""
    U = schema.usage
    return int(conn.execute(select(func.count()).where(U.c.person == person)).scalar_one())


def note_usage(conn: Connection, person: PersonId, note: NoteId) -> list[Usage]:
    """Every recorded use of a note (the injection ledger, per note)."""
    U = schema.usage
    rows = conn.execute(select(U).where(U.c.person == person, U.c.note == note).order_by(U.c.seq))
    return [usage_from_row(r) for r in rows]


def person_usage(conn: Connection, person: PersonId) -> dict[NoteId, list[Usage]]:
    """Every use of every note of a person (the injection ledger), oldest first per note:
    one query, for a report that names each note's disclosures."""
    U = schema.usage
    found: dict[NoteId, list[Usage]] = {}
    rows = conn.execute(select(U).where(U.c.person == person).order_by(U.c.note, U.c.seq))
    for r in rows:
        found.setdefault(NoteId(r.note), []).append(usage_from_row(r))
    return found


def person_seq(conn: Connection, person: PersonId) -> int:
    """The last event folded into the projection (0 if none)."""
    P = schema.person_state
    value = conn.execute(select(P.c.seq).where(P.c.person == person)).scalar()
    return int(value or 0)


def profile_seq(conn: Connection, person: PersonId) -> int | None:
    """The event holding the person's current profile document (M1), or None."""
    P = schema.person_state
    value = conn.execute(select(P.c.profile_seq).where(P.c.person == person)).scalar()
    return None if value is None else int(value)


def deleted_conversations(conn: Connection, person: PersonId) -> set[ConversationId]:
    """The conversations of a person that were deleted (their note texts are gone)."""
    D = schema.deleted_conversations
    rows = conn.execute(select(D.c.conversation).where(D.c.person == person)).scalars()
    return {ConversationId(c) for c in rows}


def processed_turns(
    conn: Connection, person: PersonId, conversation: ConversationId
) -> set[TurnId]:
    """Turns of a conversation extraction has handled for a person, notes or not (W2)."""
    P = schema.processed_turns
    rows = conn.execute(
        select(P.c.turn).where(P.c.person == person, P.c.conversation == conversation)
    )
    return {TurnId(t) for t in rows.scalars()}


def candidates(
    conn: Connection,
    person: PersonId,
    status: str | None = None,
    *,
    after_seq: int = 0,
    limit: int | None = None,
) -> list[CandidateState]:
    """A person's learning candidates, oldest first; optionally only those in one status,
    or one page: the first `limit` suggested after event `after_seq`."""
    C = schema.candidates
    query = select(C).where(C.c.person == person, C.c.payload_seq > after_seq)
    if status is not None:
        query = query.where(C.c.status == status)
    query = query.order_by(C.c.payload_seq)
    if limit is not None:
        query = query.limit(limit)
    return [candidate_from_row(r) for r in conn.execute(query)]


def candidate(
    conn: Connection, person: PersonId, candidate_id: CandidateId
) -> CandidateState | None:
    """One candidate, or None."""
    C = schema.candidates
    row = conn.execute(select(C).where(C.c.person == person, C.c.id == candidate_id)).first()
    return candidate_from_row(row) if row else None
