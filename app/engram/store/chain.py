"""Hash chains: entry_hash = H(prev_hash ‖ header ‖ H(nonce ‖ ciphertext)).

Each write transaction signs the head of every chain it touched (store/signed_heads.py);
entries carry no signature of their own (`UNSIGNED`), except those written before signed
heads, whose per-entry signatures stay as history and are still checked.

Headers are canonical JSON of a row's clear columns. The chain commits to a payload only
through its hash, so a payload can be shredded or excised and the chain still verifies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, Table, select

from engram.store import contexts
from engram.store.crypto import canonical_json, digest, utf8

# What an entry's `signature` column holds now: its chain's signed head vouches for it.
UNSIGNED = b""


def genesis(store_id: str, chain_id: str) -> bytes:
    """The prev_hash of a chain's first entry: binds the chain to its store and name."""
    return digest(contexts.GENESIS, store_id.encode(), chain_id.encode())


def payload_hash(sealed: bytes | None) -> bytes | None:
    """H(nonce ‖ ciphertext); None when the entry has no payload."""
    return None if sealed is None else digest(contexts.PAYLOAD, sealed)


def header(fields: Sequence[Any]) -> bytes:
    """Canonical bytes of a row's clear, chained columns."""
    return utf8(canonical_json(list(fields)))


def entry_hash(prev: bytes, head: bytes, payload: bytes | None) -> bytes:
    """The chained hash of one entry."""
    return digest(prev, head, payload or b"")


def journal_chain(person: str) -> str:
    """Chain id of a person's journal."""
    return f"journal:{person}"


def log_chain(conversation: str) -> str:
    """Chain id of a conversation's log."""
    return f"log:{conversation}"


ERASURE_CHAIN = "erasures"


@dataclass(frozen=True, slots=True)
class Head:
    """Where a chain stands: its last seq, the hash to link to, and its last time."""

    seq: int
    prev: bytes
    at: int


def head(
    conn: Connection, table: Table, store_id: str, chain_id: str, *where: ColumnElement[bool]
) -> Head:
    """The head of one chain (genesis when it has no entries yet)."""
    row = conn.execute(
        select(table.c.seq, table.c.entry_hash, table.c.at)
        .where(*where)
        .order_by(table.c.seq.desc())
        .limit(1)
    ).first()
    if row is None:
        return Head(0, genesis(store_id, chain_id), 0)
    return Head(int(row.seq), bytes(row.entry_hash), int(row.at))
