"""Rows of the `api_keys` table: a keyed hash per key (the key itself is shown once)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Row, insert, select, update

from engram.store import schema
from engram.store.store import Store

K = schema.api_keys


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A project API key's record (never the key)."""

    id: str
    label: str
    created_at: int
    created_by: str
    revoked_at: int | None


def add(
    store: Store, conn: Connection, key_id: str, key_hash: str, label: str, at: int, actor: str
) -> None:
    """Record a new key by its hash."""
    conn.execute(
        insert(K).values(id=key_id, key_hash=key_hash, label=label, created_at=at, created_by=actor)
    )
    store.touched(K, key_id)


def active_by_hash(conn: Connection, key_hash: str) -> ApiKey | None:
    """The unrevoked key with this hash, or None."""
    row = conn.execute(select(K).where(K.c.key_hash == key_hash, K.c.revoked_at.is_(None))).first()
    return _key(row) if row else None


def every(conn: Connection) -> list[ApiKey]:
    """All keys, oldest first."""
    return [_key(r) for r in conn.execute(select(K).order_by(K.c.created_at, K.c.id))]


def revoke(store: Store, conn: Connection, key_id: str, at: int) -> bool:
    """Revoke a key; False if there is no such unrevoked key."""
    done = conn.execute(
        update(K).where(K.c.id == key_id, K.c.revoked_at.is_(None)).values(revoked_at=at)
    )
    store.touched(K, key_id)
    return bool(done.rowcount)


def _key(r: Row[Any]) -> ApiKey:
    return ApiKey(r.id, r.label, int(r.created_at), r.created_by, r.revoked_at)
