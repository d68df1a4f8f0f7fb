"""Rows of the `api_keys` table: a keyed hash per key (the key itself is shown once)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, insert, select, update

from engram.model.errors import changed_outside
from engram.store import schema
from engram.store.ledger_check import read_vouched
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


def active_by_hash(store: Store, conn: Connection, key_hash: str) -> ApiKey | None:
    """The unrevoked key with this hash, or None. A key whose row the signed ledger does
    not vouch for (its revocation cleared, or the row added outside Engram) is refused
    with ChangedOutsideEngram."""
    where = and_(K.c.key_hash == key_hash, K.c.revoked_at.is_(None))
    row, vouched = read_vouched(store.ledger_view, conn, K, where)
    if not vouched:
        raise changed_outside(
            "The record of this API key was changed outside Engram, so the key is refused"
        )
    return _key(row) if row else None


def every(conn: Connection) -> list[ApiKey]:
    """All keys, oldest first."""
    return [_key(r) for r in conn.execute(select(K).order_by(K.c.created_at, K.c.id)).mappings()]


def revoke(store: Store, conn: Connection, key_id: str, at: int) -> bool:
    """Revoke a key; False if there is no such unrevoked key."""
    done = conn.execute(
        update(K).where(K.c.id == key_id, K.c.revoked_at.is_(None)).values(revoked_at=at)
    )
    store.touched(K, key_id)
    return bool(done.rowcount)


def _key(r: Mapping[Any, Any]) -> ApiKey:
    return ApiKey(r["id"], r["label"], int(r["created_at"]), r["created_by"], r["revoked_at"])
