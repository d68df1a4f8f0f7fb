"""A person's journal filtered in SQL, a page at a time: the audit workspace (issue 21 item 5).

The filter looks only at clear columns: actor, type, time, and the body's ids (a note is
found by its id in the clear JSON body, then confirmed by the caller). Pages are read by
offset until the matching seqs are known (`matching_seqs`, one pass of a covering index),
then by seq, so a deep page costs what the first did.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select

from engram.model.clock import to_micros
from engram.model.events import Event
from engram.model.ids import PersonId
from engram.store import schema
from engram.store.journal import _event
from engram.store.rows import plain_rows

J = schema.journal
CHUNK = 500  # seqs per IN (…) list


@dataclass(frozen=True, slots=True)
class JournalWhere:
    """What a journal row must be to be listed; empty collections and None match all."""

    actors: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    naming: str | None = None  # an id the body must hold (a note's, a candidate's)


def _where(person: PersonId, where: JournalWhere) -> list[Any]:
    clauses: list[Any] = [J.c.person == person]
    if where.actors:
        clauses.append(J.c.actor.in_(list(where.actors)))
    if where.types:
        clauses.append(J.c.type.in_(list(where.types)))
    if where.since is not None:
        clauses.append(J.c.at >= to_micros(where.since))
    if where.until is not None:
        clauses.append(J.c.at <= to_micros(where.until))
    if where.naming:
        clauses.append(J.c.body.contains(f'"{where.naming}"', autoescape=True))
    return clauses


def count(conn: Connection, person: PersonId, where: JournalWhere) -> int:
    """How many of the person's journal rows match."""
    query = select(func.count()).select_from(J).where(*_where(person, where))
    return int(conn.execute(query).scalar() or 0)


def page(
    conn: Connection, person: PersonId, where: JournalWhere, offset: int, limit: int
) -> list[Event]:
    """The matching events from `offset` (in journal order), at most `limit`."""
    query = select(J).where(*_where(person, where)).order_by(J.c.seq).offset(offset).limit(limit)
    return [_event(row) for row in plain_rows(conn.execute(query))]


def after(
    conn: Connection, person: PersonId, where: JournalWhere, after_seq: int, limit: int
) -> list[Event]:
    """The matching events after `after_seq` (in journal order), at most `limit`."""
    query = (
        select(J).where(*_where(person, where), J.c.seq > after_seq).order_by(J.c.seq).limit(limit)
    )
    return [_event(row) for row in plain_rows(conn.execute(query))]


def matching_seqs(conn: Connection, person: PersonId, where: JournalWhere) -> array[int]:
    """Every matching seq, in order, packed (8 bytes each: a million rows is 8 MB)."""
    query = select(J.c.seq).where(*_where(person, where)).order_by(J.c.seq)
    found: array[int] = array("q")
    result = conn.execute(query)
    while rows := result.fetchmany(10_000):
        found.extend(row[0] for row in rows)
    return found


def by_seqs(conn: Connection, person: PersonId, seqs: Sequence[int]) -> list[Event]:
    """These events of the person's journal, in journal order."""
    events: list[Event] = []
    for start in range(0, len(seqs), CHUNK):
        chunk = list(seqs[start : start + CHUNK])
        query = select(J).where(J.c.person == person, J.c.seq.in_(chunk)).order_by(J.c.seq)
        events += [_event(row) for row in plain_rows(conn.execute(query))]
    return events


def actors(conn: Connection, person: PersonId) -> list[str]:
    """Everyone who appended to the person's journal, by how often (most first)."""
    query = (
        select(J.c.actor, func.count().label("n"))
        .where(J.c.person == person)
        .group_by(J.c.actor)
        .order_by(func.count().desc(), J.c.actor)
    )
    return [str(row.actor) for row in conn.execute(query)]
