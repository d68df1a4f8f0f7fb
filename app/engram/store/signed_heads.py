"""Signed chain heads: one Ed25519 signature per write transaction, not one per entry.

Every write signs, in the same transaction as its appends, the head of each chain it
touched: the chain's keyed name, its length and its head hash, and when — as a
transparency log signs its tree head (RFC 9162). The hash chain commits to every entry
before the head, so one signature over the head vouches for all of them: an entry
changed anywhere inside the signed range breaks a hash link, and an entry added past it
is an unsigned tail. Both are `verify` findings (chain_walk.py).

Rows are named by `Store.hidden_name` of the chain id, so no person or conversation id is
kept in clear here; an erased chain's row goes with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import Connection, delete, insert, select, update

from engram.store import chain, contexts, crypto, ledger, schema

H = schema.chain_heads

# The keyed name of a chain id (Store.hidden_name, or `hider` before a Store exists).
Hide = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class SignedHead:
    """One row of `chain_heads`, as stored."""

    chain: str  # the chain id's keyed hash
    length: int
    head: bytes
    at: int
    signature: bytes


def statement(store_id: str, hidden: str, length: int, head: bytes, at: int) -> bytes:
    """What the store key signs for one chain's head."""
    return crypto.digest(
        contexts.SIGNED_HEAD, chain.header([store_id, hidden, length, head.hex(), at])
    )


def hider(signing_seed: bytes) -> Hide:
    """`Store.hidden_name` from the signing seed alone (a store being created)."""
    key = crypto.digest(contexts.HIDDEN_NAMES, signing_seed)
    return lambda name: crypto.keyed_digest(key, name.encode()).hex()


def sign(
    store_id: str, signer: crypto.Signer, hidden: str, length: int, head: bytes, at: int
) -> SignedHead:
    """A signed head for one chain."""
    signature = signer.sign(statement(store_id, hidden, length, head, at))
    return SignedHead(hidden, length, head, at, signature)


def holds(verifier: crypto.Verifier, store_id: str, row: SignedHead) -> bool:
    """Whether a stored head carries the store key's signature."""
    message = statement(store_id, row.chain, row.length, row.head, row.at)
    return verifier.ok(message, row.signature)


def record(
    conn: Connection,
    store_id: str,
    signer: crypto.Signer,
    hide: Hide,
    heads: Mapping[str, tuple[int, bytes]],
    gone: Iterable[str],
    at: int,
) -> None:
    """Sign and store the head of every chain a write moved (`heads`: chain id -> length,
    head hash); a chain it removed (`gone`) loses its row, unless it holds entries again
    by the end of the write (a person erased and created anew in one write)."""
    removed = set(gone)
    for chain_id, (length, head) in sorted(heads.items()):
        if chain_id in removed:
            continue  # its current head, if any, is read below
        _put(conn, sign(store_id, signer, hide(chain_id), length, head, at))
    for chain_id in sorted(removed):
        now = current_head(conn, store_id, chain_id)
        if now is None:
            conn.execute(delete(H).where(H.c.chain == hide(chain_id)))
        else:
            _put(conn, sign(store_id, signer, hide(chain_id), now[0], now[1], at))


def _put(conn: Connection, row: SignedHead) -> None:
    values = {"length": row.length, "head": row.head, "at": row.at, "signature": row.signature}
    if conn.execute(update(H).where(H.c.chain == row.chain).values(**values)).rowcount == 0:
        conn.execute(insert(H).values(chain=row.chain, **values))


def current_head(conn: Connection, store_id: str, chain_id: str) -> tuple[int, bytes] | None:
    """A chain's length and head hash as its table holds them (None when it is empty)."""
    kind, _, name = chain_id.partition(":")
    J, L = schema.journal, schema.conversation_log
    if kind == "journal":
        found = chain.head(conn, J, store_id, chain_id, J.c.person == name)
    elif kind == "log":
        found = chain.head(conn, L, store_id, chain_id, L.c.conversation == name)
    elif chain_id == chain.ERASURE_CHAIN:
        found = chain.head(conn, schema.erasures, store_id, chain_id)
    elif chain_id == ledger.CHAIN:
        found = chain.head(conn, schema.ledger, store_id, chain_id)
    else:
        raise ValueError(f"unknown chain {chain_id!r}")
    return None if found.seq == 0 else (found.seq, found.prev)


def read_all(conn: Connection) -> dict[str, SignedHead]:
    """Every stored head, by keyed chain name."""
    return {
        str(r.chain): SignedHead(
            str(r.chain), int(r.length), bytes(r.head), int(r.at), bytes(r.signature)
        )
        for r in conn.execute(select(H))
    }


def every_chain(conn: Connection) -> list[str]:
    """The id of every chain that holds entries (for signing the heads of a store that
    had none: migration 0008)."""
    J, L = schema.journal, schema.conversation_log
    ids = [chain.journal_chain(p) for p in conn.execute(select(J.c.person).distinct()).scalars()]
    ids += [chain.log_chain(c) for c in conn.execute(select(L.c.conversation).distinct()).scalars()]
    ids += [chain.ERASURE_CHAIN, ledger.CHAIN]
    return ids


def sign_existing(
    conn: Connection, store_id: str, signer: crypto.Signer, hide: Hide, at: int
) -> int:
    """Sign the head of every chain as it stands (an upgrade to signed heads: the entries'
    own signatures are checked by verify as before); returns how many were signed."""
    signed = 0
    for chain_id in every_chain(conn):
        now = current_head(conn, store_id, chain_id)
        if now is not None:
            _put(conn, sign(store_id, signer, hide(chain_id), now[0], now[1], at))
            signed += 1
    return signed
