"""Reads of a person's stored notes, page by page or one at a time.

Two families, told apart by name: the `unscoped_*` reads see every note of any scope and
only the modules allow-listed in engine.unscoped may call them (S5); the `eligible_*` reads
are the prompt-facing ones: they take an Audience and apply its scopes before ranking (S1).
`count_notes` answers from the kept counts. A person's whole memory is in projection_memory.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import (
    BindParameter,
    Connection,
    Select,
    and_,
    bindparam,
    func,
    or_,
    select,
    union_all,
)

from engram.model.ids import ConversationId, NoteId, PersonId
from engram.model.notes import EVERY_NOTE, Note, NoteFilter, NoteStatus
from engram.model.scope import Audience, Kind
from engram.store import schema
from engram.store.codec import note_from_json

N = schema.note_state

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


def _where(query: Select[Any], person: PersonId, f: NoteFilter) -> Select[Any]:
    query = query.where(N.c.person == person)
    if f.statuses is not None:
        query = query.where(N.c.status.in_([s.value for s in f.statuses]))
    if f.scopes is not None:
        query = query.where(N.c.scope.in_([s.value for s in f.scopes]))
    if f.kinds is not None:
        query = query.where(N.c.kind.in_([k.value for k in f.kinds]))
    if f.created_after_seq is not None:
        query = query.where(N.c.created_seq > f.created_after_seq)
    return query


def _filtered(query: Select[Any], person: PersonId, f: NoteFilter) -> Select[Any]:
    query = _where(query, person, f)
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
    """How many notes match the filter, from the kept counts (no index walk); notes
    created since a point are counted along ix_note_created."""
    if f.created_after_seq is not None:
        counting = _where(select(func.count()).select_from(N), person, f)
        return int(conn.execute(counting).scalar_one())
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
    audience: Audience,
    limit: int,
    kinds: Collection[Kind] | None = None,
) -> list[Note]:
    """The subject's active notes this audience may receive, in ranking order: the
    prompt-facing read. The scopes come from the audience (S2), so no caller can widen
    them (issue 18 item 12); this only applies them before ranking (S1).
    """
    if kinds is not None:
        return _ranked_by_kind(conn, audience, limit, kinds)
    query = (
        select(N.c.data)
        .where(
            and_(
                N.c.person == audience.subject,
                N.c.status == NoteStatus.ACTIVE.value,
                N.c.scope.in_([s.value for s in audience.scopes]),
            )
        )
        .order_by(*RANK_ORDER)
        .limit(limit)
    )
    return [note_from_json(data) for data in conn.execute(query).scalars()]


def _ranked_by_kind(
    conn: Connection, audience: Audience, limit: int, kinds: Collection[Kind]
) -> list[Note]:
    """eligible_ranked for some kinds: the best `limit` of each (scope, kind) are read off
    ix_note_kind_rank (ids and rank columns only, no row), the best `limit` of those are
    then read whole. The cost follows `limit`, not how many notes of other kinds rank
    above them (issue 19 item 4: a shared turn's preferences among 100,000 notes)."""
    scopes = tuple(sorted(s.value for s in audience.scopes))
    wanted = tuple(sorted(k.value for k in kinds))
    if not scopes or not wanted:
        return []
    query = _by_kind_query(scopes, wanted)
    rows = conn.execute(query, {"subject": audience.subject, "wanted": limit}).scalars()
    return [note_from_json(data) for data in rows]


@functools.lru_cache(maxsize=64)
def _by_kind_query(scopes: tuple[str, ...], kinds: tuple[str, ...]) -> Select[Any]:
    """The statement of _ranked_by_kind, built once per (scopes, kinds): the subject and
    the limit are bound at each call."""
    subject: BindParameter[str] = bindparam("subject")
    wanted: BindParameter[int] = bindparam("wanted")
    rank_columns = (N.c.id, N.c.confidence_bp, N.c.last_source_at, N.c.valid_from)
    each = [
        select(*part.c)
        for part in (
            select(*rank_columns)
            .where(
                N.c.person == subject,
                N.c.status == NoteStatus.ACTIVE.value,
                N.c.scope == scope,
                N.c.kind == kind,
            )
            .order_by(*RANK_ORDER)
            .limit(wanted)
            .subquery()
            for scope in scopes
            for kind in kinds
        )
    ]
    merged = (each[0] if len(each) == 1 else union_all(*each)).subquery()
    order = (
        merged.c.confidence_bp.desc(),
        merged.c.last_source_at.desc(),
        merged.c.valid_from.asc(),
        merged.c.id,
    )
    best = select(*merged.c).order_by(*order).limit(wanted).subquery()
    return (
        select(N.c.data)
        .join(best, and_(N.c.person == subject, N.c.id == best.c.id))
        .order_by(
            best.c.confidence_bp.desc(),
            best.c.last_source_at.desc(),
            best.c.valid_from.asc(),
            best.c.id,
        )
    )


def eligible_note(conn: Connection, audience: Audience, note_id: NoteId) -> Note | None:
    """One active note of the subject, only if this audience may receive it (S1, S2)."""
    data = conn.execute(
        select(N.c.data).where(
            N.c.person == audience.subject,
            N.c.id == note_id,
            N.c.status == NoteStatus.ACTIVE.value,
            N.c.scope.in_([s.value for s in audience.scopes]),
        )
    ).scalar()
    return note_from_json(data) if data is not None else None
