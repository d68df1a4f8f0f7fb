"""The persons table: who the store holds."""

from __future__ import annotations

from sqlalchemy import Connection, select

from engram.model.ids import PersonId
from engram.store import schema


def all_ids(conn: Connection) -> list[PersonId]:
    """Every person id, sorted."""
    rows = conn.execute(select(schema.persons.c.id).order_by(schema.persons.c.id)).scalars()
    return [PersonId(p) for p in rows]


def some_ids(conn: Connection, limit: int) -> list[PersonId]:
    """The first `limit` person ids, sorted (whether a store holds one person, cheaply)."""
    query = select(schema.persons.c.id).order_by(schema.persons.c.id).limit(limit)
    return [PersonId(p) for p in conn.execute(query).scalars()]
