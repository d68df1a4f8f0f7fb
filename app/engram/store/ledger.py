"""The ledger: a signed chain recording every change to the tables outside the chains.

Persons, data keys, agents and their history, API keys and the store's info row change
behaviour but are not journal or log entries. Each write that touches one of their rows
appends one ledger entry holding, for every touched row, a keyed digest of its identity
and of its whole content (None once deleted). `verify` replays the ledger and compares
every row, so a row changed, deleted, inserted or put back to an older value behind
Engram's back is reported; the ledger's head is in the checkpoint like every chain's.

Digests are keyed with a key derived from the signing key (sealed under the store key),
so the ledger names no one in clear, even after an erasure.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Connection, Table, and_, insert, inspect, select

from engram.store import chain, contexts, crypto, schema
from engram.store.dialect import lock_chain

CHAIN = "ledger"
L = schema.ledger

# (table name, primary key values in the table's key order)
RowRef = tuple[str, tuple[Any, ...]]


def ledger_key(signing_seed: bytes) -> bytes:
    """The key the ledger's digests are made with."""
    return crypto.digest(contexts.LEDGER, signing_seed)


def entry_header(seq: int, at: int, body: str) -> bytes:
    """The chained header of a ledger entry."""
    return chain.header([seq, at, body])


def _cell(value: Any) -> Any:
    """A cell as typed JSON, so 5, "5" and b"5" never digest alike."""
    if value is None:
        return None
    if isinstance(value, bool | int):
        return ["i", int(value)]
    if isinstance(value, bytes | bytearray | memoryview):
        return ["b", bytes(value).hex()]
    if isinstance(value, float):
        return ["f", repr(value)]
    return ["s", str(value)]


def _digest(key: bytes, value: Any) -> str:
    return crypto.keyed_digest(key, crypto.canonical_json(value).encode()).hex()


def subject(key: bytes, table: Table, pk: tuple[Any, ...]) -> str:
    """The keyed name of one row."""
    return _digest(key, [table.name, [_cell(v) for v in pk]])


def row_digest(key: bytes, table: Table, row: Mapping[Any, Any]) -> str:
    """The keyed digest of a row's whole content, column by column."""
    return _digest(key, [table.name, [[c.name, _cell(row[c.name])] for c in table.columns]])


def primary_key(table: Table, row: Mapping[Any, Any]) -> tuple[Any, ...]:
    """A row's primary key values, in the table's key order."""
    return tuple(row[c.name] for c in table.primary_key.columns)


def _current(conn: Connection, key: bytes, ref: RowRef) -> list[str | None]:
    table = schema.metadata.tables[ref[0]]
    match = and_(*(c == v for c, v in zip(table.primary_key.columns, ref[1], strict=True)))
    row = conn.execute(select(table).where(match)).mappings().first()
    return [
        table.name,
        subject(key, table, ref[1]),
        None if row is None else row_digest(key, table, row),
    ]


def _every_row(conn: Connection, key: bytes) -> list[list[str | None]]:
    changes: list[list[str | None]] = []
    present = set(inspect(conn).get_table_names())
    # A store upgraded through 0005 has not got the tables later revisions add (they start
    # empty, so there is nothing of theirs to record yet).
    for table in (t for t in schema.LEDGER_TABLES if t.name in present):
        for row in conn.execute(select(table)).mappings():
            pk = primary_key(table, row)
            changes.append([table.name, subject(key, table, pk), row_digest(key, table, row)])
    return changes


def append(
    conn: Connection,
    store_id: str,
    signer: crypto.Signer,
    refs: Iterable[RowRef] | None,
    at: int,
) -> tuple[int, bytes]:
    """Record the touched rows as they now stand (every row when `refs` is None) in one
    signed ledger entry; returns the ledger's new (length, head)."""
    key = ledger_key(signer.seed)
    lock_chain(conn, CHAIN)
    if refs is None:
        changes = _every_row(conn, key)
    else:
        changes = [_current(conn, key, ref) for ref in sorted(set(refs), key=repr)]
    start = chain.head(conn, L, store_id, CHAIN)
    seq, at = start.seq + 1, max(at, start.at)
    body = crypto.canonical_json(sorted(changes, key=repr))
    entry = chain.entry_hash(start.prev, entry_header(seq, at, body), None)
    conn.execute(
        insert(L).values(
            seq=seq,
            at=at,
            body=body,
            prev_hash=start.prev,
            entry_hash=entry,
            signature=chain.UNSIGNED,
        )
    )
    return seq, entry


def differences(conn: Connection, key: bytes, bodies: Iterable[str]) -> list[str]:
    """Every row that differs from the ledger's replay, as one problem sentence each."""
    expected: dict[str, tuple[str, str | None]] = {}
    for body in bodies:
        for table_name, name, digest in changes(body):
            expected[name] = (table_name, digest)
    problems: list[str] = []
    for table in schema.LEDGER_TABLES:
        for row in conn.execute(select(table)).mappings():
            pk = primary_key(table, row)
            label = f"{table.name} row {'/'.join(str(v) for v in pk)!r}"
            recorded = expected.pop(subject(key, table, pk), None)
            if recorded is None or recorded[1] is None:
                problems.append(f"{label}: it is not in the signed ledger (added outside Engram)")
            elif recorded[1] != row_digest(key, table, row):
                problems.append(
                    f"{label}: it differs from what the signed ledger recorded (changed "
                    "outside Engram, or put back to an older value)"
                )
    missing: dict[str, int] = {}
    for table_name, digest in expected.values():
        if digest is not None:
            missing[table_name] = missing.get(table_name, 0) + 1
    for table_name, count in sorted(missing.items()):
        rows = "a row" if count == 1 else f"{count} rows"
        problems.append(
            f"{table_name}: {rows} the signed ledger records {'is' if count == 1 else 'are'} "
            "missing (deleted outside Engram)"
        )
    return problems


def changes(body: str) -> list[tuple[str, str, str | None]]:
    """One entry body's changes: (table, row subject, digest or None once deleted)."""
    out: list[tuple[str, str, str | None]] = []
    for table, name, digest in json.loads(body):
        if table not in schema.metadata.tables or not isinstance(name, str):
            raise ValueError(f"a ledger entry names an unknown table {table!r}")
        out.append((str(table), name, None if digest is None else str(digest)))
    return out
