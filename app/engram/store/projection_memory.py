"""A person's whole projection as a PersonMemory: read for the allow-listed modules
(`unscoped_memory`, S5), handed over unopened (`StoredNotes`: the maintenance pass gives one
to engine.merge), and compared with a fresh replay of the journal (`matches_replay`, verify).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import Connection, select

from engram.model.ids import ConversationId, NoteId, PersonId, TurnId
from engram.model.notes import Note, NoteStatus, PersonMemory
from engram.store import schema
from engram.store.codec import note_from_json
from engram.store.projection_rows import (
    NOTE_COLUMNS,
    candidate_from_row,
    note_values,
    usage_from_row,
)
from engram.store.projection_state import recent_digest
from engram.store.rows import plain_rows

N = schema.note_state
STREAM = 256  # rows fetched at a time while a replay is compared


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
        memory.add_usage(NoteId(r.note), usage_from_row(r))
    C = schema.candidates
    for r in conn.execute(select(C).where(C.c.person == person)):
        memory.put_candidate(candidate_from_row(r))
    D = schema.deleted_conversations
    memory.deleted_conversations = {
        ConversationId(c)
        for c in conn.execute(select(D.c.conversation).where(D.c.person == person)).scalars()
    }
    return memory


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
    # Each stored row, its JSON included, must be exactly what the replayed note serialises
    # to. The rows stream past (a person with 100,000 notes is not read into memory twice).
    columns = [N.c[name] for name in NOTE_COLUMNS]
    rows = conn.execute(
        select(*columns).where(N.c.person == person).execution_options(yield_per=STREAM)
    )
    seen = 0
    expected_sources = 0
    expected_counts: dict[tuple[str, str, str], int] = {}
    for row in plain_rows(rows):
        seen += 1
        note = memory.unscoped_note(NoteId(row.id))
        if note is None or note_values(note) != tuple(row):
            return False
        expected_sources += len({s.conversation for s in note.sources})
        key = (row.status, row.scope, row.kind)
        expected_counts[key] = expected_counts.get(key, 0) + 1
    if seen != memory.note_count():
        return False
    C = schema.note_counts
    stored_counts = {
        (r.status, r.scope, r.kind): int(r.n)
        for r in conn.execute(select(C).where(C.c.person == person))
    }
    if stored_counts != expected_counts:
        return False
    # Every stored source row names a source of its note, and there are as many as the
    # replayed notes have (the table's key makes each row distinct).
    S = schema.note_sources
    stored = conn.execute(
        select(S.c.note, S.c.conversation)
        .where(S.c.person == person)
        .execution_options(yield_per=STREAM)
    )
    found = 0
    for r in stored:
        found += 1
        note = memory.unscoped_note(NoteId(r.note))
        if note is None or all(s.conversation != r.conversation for s in note.sources):
            return False
    return found == expected_sources
