"""The fold's projection in SQL: current notes and state, kept in step with every append.

`ProjectionTarget` is a FoldTarget: the journal applies each new event to it with the very
same engine.fold.apply_event used for replay, touching only the rows the event names, so
an append costs the same with 10 or 10 million events. `verify` re-folds the journal and
compares it with these tables (projection_memory.matches_replay). This module holds the
write side only: the reads are in projection_notes (notes), projection_state (everything
beside the notes) and projection_memory (a person's whole memory).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, bindparam, delete, insert, select, update

from engram.model.clock import to_micros
from engram.model.ids import CandidateId, ConversationId, NoteId, PersonId, TurnId
from engram.model.notes import CandidateState, DigestLine, Note, Usage
from engram.store import schema
from engram.store.codec import note_from_json
from engram.store.projection_rows import candidate_from_row, note_row

N = schema.note_state


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
            state = candidate_from_row(row) if row else None
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
        inserts = [note_row(n) for i, n in self._dirty.items() if i not in self._existing]
        if inserts:
            conn.execute(insert(N), inserts)
        changed = [i for i in self._dirty if i in self._existing]
        if changed:  # one executemany, not a compiled statement per note
            conn.execute(
                _UPDATE_NOTE,
                [{**note_row(self._dirty[i]), "w_person": person, "w_id": i} for i in changed],
            )
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


# A note's row rewritten in place: every column from the parameters, found by its key.
_UPDATE_NOTE = update(N).where(N.c.person == bindparam("w_person"), N.c.id == bindparam("w_id"))


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
