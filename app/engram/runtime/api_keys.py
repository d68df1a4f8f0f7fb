"""Project API keys (the HTTP face's callers): created once, checked by keyed hash."""

from __future__ import annotations

import secrets
from typing import Any

from engram.model.clock import from_micros
from engram.model.errors import InvalidInput, NotFound
from engram.store import api_keys
from engram.store.api_keys import ApiKey
from engram.store.store import Store

PREFIX = "ek_"
MAX_LABEL_CHARS = 120


def create_key(store: Store, label: str, actor: str) -> tuple[str, str]:
    """A new key: returns (key id, the key). The key is shown this once and never stored."""
    label = label.strip()
    if not label or len(label) > MAX_LABEL_CHARS:
        raise InvalidInput(f"A key needs a label of 1 to {MAX_LABEL_CHARS} characters.")
    key = PREFIX + secrets.token_urlsafe(32)
    key_id = "k_" + secrets.token_hex(6)
    with store.write() as txn:
        api_keys.add(
            store, txn.conn, key_id, store.hidden_name(key), label, store.now_micros(), actor
        )
    return key_id, key


def check_key(store: Store, key: str) -> ApiKey | None:
    """The key's record if it is valid and not revoked; None for an unknown or revoked key.
    A key whose record the signed ledger does not vouch for (its revocation cleared, or
    the row added outside Engram) is refused with ChangedOutsideEngram, one sentence."""
    if not key.startswith(PREFIX) or len(key) > 200:
        return None
    with store.read() as conn:
        return api_keys.active_by_hash(store, conn, store.hidden_name(key))


def list_keys(store: Store) -> list[dict[str, Any]]:
    """Every key's record (never the key)."""
    with store.read() as conn:
        keys = api_keys.every(conn)
    return [
        {
            "id": k.id,
            "label": k.label,
            "created_at": from_micros(k.created_at).isoformat(),
            "created_by": k.created_by,
            "revoked_at": from_micros(k.revoked_at).isoformat() if k.revoked_at else None,
        }
        for k in keys
    ]


def revoke_key(store: Store, key_id: str) -> None:
    """Revoke a key at once."""
    with store.write() as txn:
        if not api_keys.revoke(store, txn.conn, key_id, store.now_micros()):
            raise NotFound(f"There is no active key {key_id!r}.")
