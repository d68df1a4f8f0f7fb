"""The runtime's check of one row outside the chains against the signed ledger.

`verify` replays the whole ledger and compares every row; the runtime cannot afford that
on every request, yet must not act on a row changed behind Engram's back (a revoked API
key whose `revoked_at` was cleared, an agent switched to automatic learning with an SQL
UPDATE). So the places where such a row changes behaviour ask `vouched`: is the row, as it
stands, exactly what the ledger last recorded for it?

What this trusts, and why that is enough: it reads the ledger's entry bodies without
checking their hashes or signatures. `verify` checks the chain and every signature; an
attacker who can write the file but has not got the store key cannot write an entry
that `verify` accepts, and to vouch for a forged row they would have to add or change
an entry. So a forged row is refused here, and a forged ledger entry is reported by
`verify` — the runtime never has to re-walk the chain per call.

It is cheap: a map from each row's keyed subject to its latest recorded digest is built
from the bodies once, kept on the Store keyed by the ledger's head (seq and entry hash),
and brought forward from the entries after the cached head when the head moves (our
own writes move it too). A head that went backwards, or whose entries do not link on
from the cached one, rebuilds the map from scratch.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, Table, select

from engram.model.errors import damaged
from engram.store import ledger

L = ledger.L
# The ledger's head, read in the same statement as the row it vouches for (one round trip).
_LAST = select(L.c.seq).order_by(L.c.seq.desc()).limit(1)
HEAD_SEQ = _LAST.scalar_subquery().label("ledger_head_seq")
HEAD_HASH = _LAST.with_only_columns(L.c.entry_hash).scalar_subquery().label("ledger_head_hash")

Head = tuple[int, bytes]


def _head(seq: Any, entry: Any) -> Head:
    return (0, b"") if seq is None else (int(seq), bytes(entry))


class LedgerView:
    """Each row's latest digest in the ledger, as of one head of it (see the module)."""

    def __init__(self, key: bytes) -> None:
        self.key = key
        self._lock = threading.Lock()
        self._seq = 0
        self._hash = b""
        self._latest: dict[str, str | None] = {}

    def recorded(self, conn: Connection, name: str, head: Head | None = None) -> str | None:
        """The latest digest the ledger holds for the row with this subject in the snapshot
        `conn` reads (None: no record, or recorded as deleted); `head` is the ledger's head
        when the caller read it already."""
        if head is None:
            top = conn.execute(select(HEAD_SEQ, HEAD_HASH)).one()
            head = _head(top[0], top[1])
        seq, entry = head
        with self._lock:
            if (seq, entry) != (self._seq, self._hash):
                self._catch_up(conn, seq, entry)
            return self._latest.get(name)

    def _catch_up(self, conn: Connection, seq: int, entry: bytes) -> None:
        forward = 0 < self._seq < seq
        after = self._seq if forward else 0
        rows = conn.execute(
            select(L.c.seq, L.c.body, L.c.prev_hash, L.c.entry_hash)
            .where(L.c.seq > after, L.c.seq <= seq)
            .order_by(L.c.seq)
        ).all()
        latest = dict(self._latest) if forward else {}
        expected_seq, link = after + 1, self._hash if forward else None
        for row in rows:
            if forward and (int(row.seq) != expected_seq or bytes(row.prev_hash) != link):
                self._seq, self._hash, self._latest = 0, b"", {}
                self._catch_up(conn, seq, entry)  # not a continuation: start again
                return
            expected_seq, link = int(row.seq) + 1, bytes(row.entry_hash)
            try:
                for _table, name, digest in ledger.changes(row.body):
                    latest[name] = digest
            except (ValueError, TypeError):
                raise damaged(
                    "The store's signed ledger of changes outside the chains cannot be read"
                ) from None
        self._seq, self._hash, self._latest = seq, entry, latest


def vouched(
    view: LedgerView,
    conn: Connection,
    table: Table,
    row: Mapping[Any, Any] | None,
    pk: tuple[Any, ...] | None = None,
    head: Head | None = None,
) -> bool:
    """Whether the ledger's latest record of a row is the row exactly as it stands: a row
    the ledger never recorded, or one that differs from its record, is not vouched for;
    `row` None (with its primary key `pk`) asks whether the ledger agrees it is absent."""
    if row is not None:
        pk = ledger.primary_key(table, row)
    if pk is None:
        raise ValueError("vouched needs a row or its primary key")
    name = ledger.subject(view.key, table, pk)
    actual = None if row is None else ledger.row_digest(view.key, table, row)
    return view.recorded(conn, name, head) == actual


def read_vouched(
    view: LedgerView, conn: Connection, table: Table, where: Any, pk: tuple[Any, ...] | None = None
) -> tuple[Mapping[Any, Any] | None, bool]:
    """The one row matching `where` (or None) and whether the ledger vouches for it.

    On a mismatch it reads once more: under READ COMMITTED (PostgreSQL) a legitimate write
    committing between reading the row and the ledger's head would otherwise look like a
    change outside Engram. In a SQLite snapshot the second read gives the same answer."""
    row: Mapping[Any, Any] | None = None
    for _ in range(2):
        row = conn.execute(select(table, HEAD_SEQ, HEAD_HASH).where(where)).mappings().first()
        if row is None and pk is None:
            return None, True
        head = None if row is None else _head(row[HEAD_SEQ.name], row[HEAD_HASH.name])
        if vouched(view, conn, table, row, pk, head):
            return row, True
    return row, False
