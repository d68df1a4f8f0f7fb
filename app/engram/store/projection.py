"""The fold's projection in SQL: current notes and state, kept in step with every append.

`ProjectionTarget` is a FoldTarget: the journal applies each new event to it with the very
same engine.fold.apply_event used for replay, touching only the rows the event names, so
an append costs the same with 10 or 10 million events. `verify` re-folds the journal and
compares it with these tables.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Row, Select, and_, delete, func, insert, or_, select, update

from engram.model.clock import from_micros, to_micros
from engram.model.ids import CandidateId, ConversationId, NoteId, PersonId, TurnId
from engram.model.notes import (
    EVERY_NOTE,
    CandidateState,
    DigestLine,
    Note,
    NoteFilter,
    NoteStatus,
    PersonMemory,
    Usage,
)
from engram.model.scope import Kind, Scope
from engram.store import schema
from engram.store.codec import note_from_json, note_to_json

N = schema.note_state


def _note_row(note: Note) -> dict[str, Any]:
    return {
        "person": note.person,
        "id": note.id,
        "kind": note.kind,
        "scope": note.scope,
        "status": note.status,
        "origin": note.origin,
        "confidence_bp": note.confidence_bp,
        "last_source_at": to_micros(note.last_source_at),
        "valid_from": to_micros(note.valid_from),
        "valid_to": to_micros(note.valid_to) if note.valid_to else None,
        "created_seq": note.created_seq,
        "data": note_to_json(note),
    }


def _usage(r: Row[Any]) -> Usage:
    return Usage(
        r.seq,
        from_micros(r.at),
        r.via,
        r.rank,
        ConversationId(r.conversation) if r.conversation else None,
        TurnId(r.turn) if r.turn else None,
    )


def _candidate(r: Row[Any]) -> CandidateState:
    return CandidateState(
        CandidateId(r.id),
        r.revision,
        r.status,
        r.payload_seq,
        Kind(r.kind),
        Scope(r.scope),
        NoteId(r.note) if r.note else None,
    )


def _count_key(note: Note) -> tuple[str, str, str]:
    return (note.status.value, note.scope.value, note.kind.value)


class ProjectionTarget:
    """A FoldTarget writing through to the projection tables inside one transaction."""

    def __init__(self, conn: Connection, person: PersonId) -> None:
        self.conn = conn
        self.person = person
        row = conn.execute(
            select(schema.person_state).where(schema.person_state.c.person == person)
        ).first()
        self._state_exists = row is not None
        self.seq: int = int(row.seq) if row else 0
        self._profile_seq: int | None = row.profile_seq if row else None
        self._note_cache: dict[NoteId, Note | None] = {}
        self._existing: set[NoteId] = set()
        self._original: dict[NoteId, Note] = {}
        self._dirty: dict[NoteId, Note] = {}
        self._digest: list[DigestLine] = []
        self._usage: list[tuple[NoteId, Usage]] = []
        self._processed: set[tuple[ConversationId, TurnId]] = set()
        self._candidates: dict[CandidateId, CandidateState | None] = {}
        self._existing_candidates: set[CandidateId] = set()
        self._dirty_candidates: dict[CandidateId, CandidateState] = {}
        self._deleted: set[ConversationId] = set()

    def prefetch(self, note_ids: Iterable[NoteId]) -> None:
        """Load the notes a batch of events will touch in one query (misses cached too)."""
        wanted = [i for i in dict.fromkeys(note_ids) if i not in self._note_cache]
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            rows = self.conn.execute(
                select(N.c.id, N.c.data).where(N.c.person == self.person, N.c.id.in_(chunk))
            )
            found = {NoteId(row.id): note_from_json(row.data) for row in rows}
            for note_id in chunk:
                self._note_cache[note_id] = found.get(note_id)
            self._existing.update(found)
            self._original.update(found)

    # FoldTarget
    def unscoped_note(self, note_id: NoteId) -> Note | None:
        if note_id not in self._note_cache:
            data = self.conn.execute(
                select(N.c.data).where(N.c.person == self.person, N.c.id == note_id)
            ).scalar()
            note = note_from_json(data) if data is not None else None
            self._note_cache[note_id] = note
            if note is not None:
                self._existing.add(note_id)
                self._original[note_id] = note
        return self._note_cache[note_id]

    def put_note(self, note: Note) -> None:
        self._note_cache[note.id] = note
        self._dirty[note.id] = note

    def add_digest(self, line: DigestLine) -> None:
        self._digest.append(line)

    def set_profile(self, seq: int) -> None:
        self._profile_seq = seq

    def mark_processed(self, conversation: ConversationId, turns: list[TurnId]) -> None:
        self._processed.update((conversation, turn) for turn in turns)

    def add_usage(self, note: NoteId, usage: Usage) -> None:
        self._usage.append((note, usage))

    def get_candidate(self, candidate: CandidateId) -> CandidateState | None:
        if candidate not in self._candidates:
            C = schema.candidates
            row = self.conn.execute(
                select(C).where(C.c.person == self.person, C.c.id == candidate)
            ).first()
            state = _candidate(row) if row else None
            self._candidates[candidate] = state
            if state is not None:
                self._existing_candidates.add(candidate)
        return self._candidates[candidate]

    def put_candidate(self, state: CandidateState) -> None:
        self._candidates[state.id] = state
        self._dirty_candidates[state.id] = state

    def mark_conversation_deleted(self, conversation: ConversationId) -> None:
        self._deleted.add(conversation)

    def set_seq(self, seq: int) -> None:
        self.seq = seq

    def flush(self) -> None:
        """Write everything the applied events changed."""
        conn, person = self.conn, self.person
        inserts = [_note_row(n) for i, n in self._dirty.items() if i not in self._existing]
        if inserts:
            conn.execute(insert(N), inserts)
        changed = [i for i in self._dirty if i in self._existing]
        for note_id in changed:
            row = _note_row(self._dirty[note_id])
            conn.execute(update(N).where(N.c.person == person, N.c.id == note_id).values(row))
        self._existing.update(self._dirty)
        self._flush_counts()
        if self._dirty:
            S = schema.note_sources
            if changed:  # new notes have no source rows yet
                conn.execute(delete(S).where(S.c.person == person, S.c.note.in_(changed)))
            source_rows = [
                {"person": person, "note": note.id, "conversation": conversation}
                for note in self._dirty.values()
                for conversation in dict.fromkeys(s.conversation for s in note.sources)
            ]
            if source_rows:
                conn.execute(insert(S), source_rows)
        self._dirty.clear()
        if self._digest:
            conn.execute(
                insert(schema.digest_lines),
                [
                    {
                        "person": person,
                        "seq": d.seq,
                        "at": to_micros(d.at),
                        "conversation": d.conversation,
                        "scope": d.scope.value,
                    }
                    for d in self._digest
                ],
            )
            self._digest.clear()
        if self._usage:
            conn.execute(
                insert(schema.usage),
                [
                    {
                        "person": person,
                        "note": note,
                        "seq": u.seq,
                        "at": to_micros(u.at),
                        "via": u.via,
                        "rank": u.rank,
                        "conversation": u.conversation,
                        "turn": u.turn,
                    }
                    for note, u in self._usage
                ],
            )
            self._usage.clear()
        if self._processed:
            P = schema.processed_turns
            known = {
                (r.conversation, r.turn)
                for r in conn.execute(
                    select(P.c.conversation, P.c.turn).where(
                        P.c.person == person,
                        P.c.conversation.in_({c for c, _ in self._processed}),
                    )
                )
            }
            fresh = [
                {"person": person, "conversation": c, "turn": t}
                for c, t in sorted(self._processed)
                if (c, t) not in known
            ]
            if fresh:
                conn.execute(insert(P), fresh)
            self._processed.clear()
        self._flush_candidates()
        if self._deleted:
            conn.execute(
                insert(schema.deleted_conversations),
                [{"person": person, "conversation": c} for c in sorted(self._deleted)],
            )
            self._deleted.clear()
        state = {"seq": self.seq, "profile_seq": self._profile_seq}
        P2 = schema.person_state
        if self._state_exists:
            conn.execute(update(P2).where(P2.c.person == person).values(state))
        else:
            conn.execute(insert(P2).values(person=person, **state))
            self._state_exists = True

    def _flush_counts(self) -> None:
        deltas: dict[tuple[str, str, str], int] = {}
        for note_id, note in self._dirty.items():
            before = self._original.get(note_id)
            if before is not None:
                key = _count_key(before)
                deltas[key] = deltas.get(key, 0) - 1
            key = _count_key(note)
            deltas[key] = deltas.get(key, 0) + 1
            self._original[note_id] = note
        changed = {k: d for k, d in deltas.items() if d}
        if not changed:
            return
        C = schema.note_counts
        current = {
            (r.status, r.scope, r.kind): int(r.n)
            for r in self.conn.execute(select(C).where(C.c.person == self.person))
        }
        for (status, scope, kind), delta in changed.items():
            where = (
                C.c.person == self.person,
                C.c.status == status,
                C.c.scope == scope,
                C.c.kind == kind,
            )
            if current.get((status, scope, kind), 0) + delta == 0:
                self.conn.execute(delete(C).where(*where))  # no zero rows: each row is a fact
            elif (status, scope, kind) in current:
                self.conn.execute(update(C).where(*where).values(n=C.c.n + delta))
            else:
                self.conn.execute(
                    insert(C).values(
                        person=self.person, status=status, scope=scope, kind=kind, n=delta
                    )
                )

    def _flush_candidates(self) -> None:
        C = schema.candidates
        for candidate_id, state in self._dirty_candidates.items():
            row = {
                "revision": state.revision,
                "status": state.status,
                "payload_seq": state.payload_seq,
                "kind": state.kind.value,
                "scope": state.scope.value,
                "note": state.note,
            }
            if candidate_id in self._existing_candidates:
                self.conn.execute(
                    update(C).where(C.c.person == self.person, C.c.id == candidate_id).values(row)
                )
            else:
                self.conn.execute(insert(C).values(person=self.person, id=candidate_id, **row))
                self._existing_candidates.add(candidate_id)
        self._dirty_candidates.clear()


# ---- reads -------------------------------------------------------------------------------

RANK_ORDER = (N.c.confidence_bp.desc(), N.c.last_source_at.desc(), N.c.valid_from.asc(), N.c.id)
SORTABLE = {
    "created": N.c.created_seq,
    "kind": N.c.kind,
    "scope": N.c.scope,
    "confidence": N.c.confidence_bp,
    "valid_from": N.c.valid_from,
    "valid_to": N.c.valid_to,
    "status": N.c.status,
}


def _filtered(query: Select[Any], person: PersonId, f: NoteFilter) -> Select[Any]:
    query = query.where(N.c.person == person)
    if f.statuses is not None:
        query = query.where(N.c.status.in_([s.value for s in f.statuses]))
    if f.scopes is not None:
        query = query.where(N.c.scope.in_([s.value for s in f.scopes]))
    if f.kinds is not None:
        query = query.where(N.c.kind.in_([k.value for k in f.kinds]))
    if f.order == "rank":
        return query.order_by(*RANK_ORDER)
    column = SORTABLE[f.order]
    return query.order_by(column.desc() if f.descending else column.asc(), N.c.created_seq)


def unscoped_notes(
    conn: Connection,
    person: PersonId,
    f: NoteFilter = EVERY_NOTE,
    *,
    limit: int | None = None,
    offset: int = 0,
) -> list[Note]:
    """A page of notes regardless of scope (S5: only allow-listed modules call this)."""
    query = _filtered(select(N.c.data), person, f)
    if limit is not None:
        query = query.limit(limit)
    if offset:
        query = query.offset(offset)
    return [note_from_json(data) for data in conn.execute(query).scalars()]


def unscoped_notes_after(
    conn: Connection,
    person: PersonId,
    f: NoteFilter,
    after: tuple[int, str] | None,
    limit: int,
) -> list[Note]:
    """A keyset page in creation order: the notes created after `after` (created_seq, id),
    so notes added or closed between pages never shift a later page (S5: allow-listed
    callers only)."""
    query = _filtered(select(N.c.data), person, NoteFilter(f.statuses, f.scopes, f.kinds, "rank"))
    query = query.order_by(None).order_by(N.c.created_seq, N.c.id)
    if after is not None:
        seq, note = after
        query = query.where(or_(N.c.created_seq > seq, and_(N.c.created_seq == seq, N.c.id > note)))
    return [note_from_json(data) for data in conn.execute(query.limit(limit)).scalars()]


def unscoped_note_ids(conn: Connection, person: PersonId, f: NoteFilter) -> list[NoteId]:
    """Every matching note id in order: what an id-based table holds (reads the index only)."""
    return [NoteId(i) for i in conn.execute(_filtered(select(N.c.id), person, f)).scalars()]


def unscoped_notes_by_ids(conn: Connection, person: PersonId, ids: Sequence[NoteId]) -> list[Note]:
    """Notes by id, in the order given (one page of an id-based table)."""
    found: dict[str, Note] = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        query = select(N.c.data).where(N.c.person == person, N.c.id.in_(chunk))
        for data in conn.execute(query).scalars():
            note = note_from_json(data)
            found[note.id] = note
    return [found[i] for i in ids if i in found]


def count_notes(conn: Connection, person: PersonId, f: NoteFilter = EVERY_NOTE) -> int:
    """How many notes match the filter, from the kept counts (no index walk)."""
    C = schema.note_counts
    query = select(func.coalesce(func.sum(C.c.n), 0)).where(C.c.person == person)
    if f.statuses is not None:
        query = query.where(C.c.status.in_([s.value for s in f.statuses]))
    if f.scopes is not None:
        query = query.where(C.c.scope.in_([s.value for s in f.scopes]))
    if f.kinds is not None:
        query = query.where(C.c.kind.in_([k.value for k in f.kinds]))
    return int(conn.execute(query).scalar_one())


def unscoped_note(conn: Connection, person: PersonId, note_id: NoteId) -> Note | None:
    """One note by id, any scope (S5: allow-listed modules only)."""
    data = conn.execute(select(N.c.data).where(N.c.person == person, N.c.id == note_id)).scalar()
    return note_from_json(data) if data is not None else None


def unscoped_notes_touching(
    conn: Connection, person: PersonId, conversation: ConversationId
) -> list[Note]:
    """Notes learned in or corroborated by a conversation (for the deletion cascade)."""
    S = schema.note_sources
    sourced = select(S.c.note).where(S.c.person == person, S.c.conversation == conversation)
    query = (
        select(N.c.data)
        .where(N.c.person == person)
        .where((N.c.origin == conversation) | N.c.id.in_(sourced))
        .order_by(N.c.created_seq)
    )
    return [note_from_json(data) for data in conn.execute(query).scalars()]


def eligible_ranked(
    conn: Connection,
    person: PersonId,
    scopes: Iterable[Scope],
    limit: int,
    kinds: Collection[Kind] | None = None,
) -> list[Note]:
    """Active notes of the given scopes in ranking order: the prompt-facing read.

    The caller takes `scopes` from engine.scope.eligible_scopes, so the scope rule stays in
    the engine; this only applies it before ranking (S1).
    """
    query = (
        select(N.c.data)
        .where(
            and_(
                N.c.person == person,
                N.c.status == NoteStatus.ACTIVE.value,
                N.c.scope.in_([s.value for s in scopes]),
            )
        )
        .order_by(*RANK_ORDER)
        .limit(limit)
    )
    if kinds is not None:
        query = query.where(N.c.kind.in_([k.value for k in kinds]))
    return [note_from_json(data) for data in conn.execute(query).scalars()]


def eligible_note(
    conn: Connection, person: PersonId, scopes: Iterable[Scope], note_id: NoteId
) -> Note | None:
    """One active note, only if its scope is among `scopes` (from engine.scope, S1)."""
    data = conn.execute(
        select(N.c.data).where(
            N.c.person == person,
            N.c.id == note_id,
            N.c.status == NoteStatus.ACTIVE.value,
            N.c.scope.in_([s.value for s in scopes]),
        )
    ).scalar()
    return note_from_json(data) if data is not None else None


def recent_digest(
    conn: Connection, person: PersonId, limit: int, scopes: Iterable[Scope] | None = None
) -> list[DigestLine]:
    """The newest digest lines first; with `scopes`, only lines of those scopes (S2)."""
    D = schema.digest_lines
    query = select(D).where(D.c.person == person)
    if scopes is not None:
        query = query.where(D.c.scope.in_([s.value for s in scopes]))
    rows = conn.execute(query.order_by(D.c.seq.desc()).limit(limit))
    return [
        DigestLine(
            r.seq,
            from_micros(r.at),
            ConversationId(r.conversation) if r.conversation else None,
            Scope(r.scope),
        )
        for r in rows
    ]


def usage_count(conn: Connection, person: PersonId) -> int:
    """How many uses of a person's notes the ledger holds (one per note per turn or tool)."""
    U = schema.usage
    return int(conn.execute(select(func.count()).where(U.c.person == person)).scalar_one())


def note_usage(conn: Connection, person: PersonId, note: NoteId) -> list[Usage]:
    """Every recorded use of a note (the injection ledger, per note)."""
    U = schema.usage
    rows = conn.execute(select(U).where(U.c.person == person, U.c.note == note).order_by(U.c.seq))
    return [_usage(r) for r in rows]


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


def unscoped_memory(conn: Connection, person: PersonId) -> PersonMemory:
    """The whole projection as a PersonMemory, notes of every scope included (S5: only the
    allow-listed modules call this, or StoredNotes on their behalf)."""
    memory = _memory_state(conn, person)
    for data in conn.execute(select(N.c.data).where(N.c.person == person)).scalars():
        memory.put_note(note_from_json(data))
    return memory


@dataclass(frozen=True, slots=True)
class StoredNotes:
    """A person's stored memory, handed unopened to an allow-listed module that reads it
    (S5): the maintenance pass gives one to engine.merge and reads no note itself."""

    conn: Connection
    person: PersonId

    def unscoped_memory(self) -> PersonMemory:
        """The memory with every note: for the allow-listed module it was handed to."""
        return unscoped_memory(self.conn, self.person)

    def unscoped_contradicted_by(self, notes: Collection[NoteId]) -> list[Note]:
        """Notes that one of `notes` contradicted (F1), any scope, in creation order: for
        the allow-listed module it was handed to."""
        if not notes:
            return []
        query = (
            select(N.c.data)
            .where(N.c.person == self.person, N.c.status == NoteStatus.CONTRADICTED.value)
            .order_by(N.c.created_seq)
        )
        found = (note_from_json(data) for data in self.conn.execute(query).scalars())
        return [n for n in found if n.closure is not None and n.closure.by_note in notes]


def deleted_conversations(conn: Connection, person: PersonId) -> set[ConversationId]:
    """The conversations of a person that were deleted (their note texts are gone)."""
    D = schema.deleted_conversations
    rows = conn.execute(select(D.c.conversation).where(D.c.person == person)).scalars()
    return {ConversationId(c) for c in rows}


def _memory_state(conn: Connection, person: PersonId) -> PersonMemory:
    """Everything of the projection but the notes."""
    memory = PersonMemory(person)
    P = schema.person_state
    state = conn.execute(select(P).where(P.c.person == person)).first()
    if state is None:
        return memory
    memory.seq = int(state.seq)
    memory.profile_seq = state.profile_seq
    memory.digest = sorted(recent_digest(conn, person, 1 << 62), key=lambda d: d.seq)
    T = schema.processed_turns
    memory.processed_turns = {
        (ConversationId(r.conversation), TurnId(r.turn))
        for r in conn.execute(select(T).where(T.c.person == person))
    }
    U = schema.usage
    for r in conn.execute(select(U).where(U.c.person == person).order_by(U.c.seq, U.c.rank)):
        memory.add_usage(NoteId(r.note), _usage(r))
    C = schema.candidates
    for r in conn.execute(select(C).where(C.c.person == person)):
        memory.put_candidate(_candidate(r))
    D = schema.deleted_conversations
    memory.deleted_conversations = {
        ConversationId(c)
        for c in conn.execute(select(D.c.conversation).where(D.c.person == person)).scalars()
    }
    return memory


def delete_person(conn: Connection, person: PersonId) -> int:
    """Remove every projection row of a person; returns rows deleted."""
    total = 0
    for table in (
        schema.note_state,
        schema.note_counts,
        schema.note_sources,
        schema.digest_lines,
        schema.processed_turns,
        schema.usage,
        schema.candidates,
        schema.deleted_conversations,
        schema.person_state,
    ):
        total += conn.execute(delete(table).where(table.c.person == person)).rowcount
    return total


def matches_replay(conn: Connection, person: PersonId, memory: PersonMemory) -> bool:
    """Whether every projection row, indexed columns included, equals a fresh replay."""
    try:
        rest = _memory_state(conn, person)
    except (ValueError, KeyError, TypeError, IndexError, OverflowError):
        return False
    replayed = PersonMemory(
        memory.person,
        memory.seq,
        {},
        memory.digest,
        memory.profile_seq,
        memory.processed_turns,
        memory.usage,
        memory.candidates,
        memory.deleted_conversations,
    )
    if rest != replayed:
        return False
    # Each stored row, its JSON included, must be exactly what the replayed note serialises to.
    rows = conn.execute(select(N).where(N.c.person == person)).mappings().all()
    if len(rows) != memory.note_count():
        return False
    expected_sources: set[tuple[str, str]] = set()
    for row in rows:
        note = memory.unscoped_note(NoteId(row["id"]))
        if note is None or _note_row(note) != dict(row):
            return False
        expected_sources.update((note.id, s.conversation) for s in note.sources)
    expected_counts: dict[tuple[str, str, str], int] = {}
    for row in rows:
        key = (row["status"], row["scope"], row["kind"])
        expected_counts[key] = expected_counts.get(key, 0) + 1
    C = schema.note_counts
    stored_counts = {
        (r.status, r.scope, r.kind): int(r.n)
        for r in conn.execute(select(C).where(C.c.person == person))
    }
    if stored_counts != expected_counts:
        return False
    S = schema.note_sources
    stored_sources = {
        (r.note, r.conversation)
        for r in conn.execute(select(S.c.note, S.c.conversation).where(S.c.person == person))
    }
    return stored_sources == expected_sources


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
    conn: Connection, person: PersonId, status: str | None = None
) -> list[CandidateState]:
    """A person's learning candidates, oldest first; optionally only those in one status."""
    C = schema.candidates
    query = select(C).where(C.c.person == person)
    if status is not None:
        query = query.where(C.c.status == status)
    return [_candidate(r) for r in conn.execute(query.order_by(C.c.payload_seq))]


def candidate(
    conn: Connection, person: PersonId, candidate_id: CandidateId
) -> CandidateState | None:
    """One candidate, or None."""
    C = schema.candidates
    row = conn.execute(select(C).where(C.c.person == person, C.c.id == candidate_id)).first()
    return _candidate(row) if row else None
