"""Whether what a reader derived from a person's memory still holds: the signed heads of
the chains it was read from, as one comparable value (issue 19 item 3).

Every write moves the head of each chain it touches in the same transaction
(signed_heads.py): a person's journal for their notes, and the ledger for API keys and
agent configurations. An answer read while the heads stood at some value is the answer for
as long as they still stand there — in this process or any other that writes the store.
An erased chain loses its row, and a chain made again under the same name has another
head hash, so neither is ever taken for the old one.

On SQLite there is a cheaper question first: `version_now` is the database's data_version
on a connection of its own, which moves whenever any other connection — of this process or
another — commits. While it has not moved since a mark was read, the mark still holds, and
asking costs no read of any table (a few microseconds, fit for the event loop). Read the
version before the mark: a commit in between then moves the version, never the reverse.
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
from pathlib import Path

from sqlalchemy import Connection, bindparam, select

from engram.model.ids import PersonId
from engram.store import chain, ledger, schema
from engram.store.store import Store

H = schema.chain_heads
# A statement made once: building and caching a select costs more than the read itself.
_HEADS = select(H.c.chain, H.c.length, H.c.head).where(
    (H.c.chain == bindparam("ledger")) | (H.c.chain == bindparam("journal"))
)

Mark = tuple[tuple[str, int, bytes], ...]


def mark_now(store: Store, person: PersonId) -> Mark:
    """The heads, now, of the ledger and of `person`'s journal (one small read)."""
    with store.read() as conn:
        return person_mark(store, conn, person)


def person_mark(store: Store, conn: Connection, person: PersonId) -> Mark:
    """The heads of the ledger and of `person`'s journal, as `conn` sees them."""
    names = {
        "ledger": _hidden(store, ledger.CHAIN),
        "journal": _hidden(store, chain.journal_chain(person)),
    }
    rows = conn.execute(_HEADS, names).all()
    return tuple(sorted((str(c), int(n), bytes(h)) for c, n, h in rows))


def _hidden(store: Store, name: str) -> str:
    held: dict[str, str] = store.plaintext_caches.setdefault("hidden_names", {})
    found = held.get(name)
    if found is None:
        if len(held) > 10_000:  # a server asked about very many people
            held.clear()
        found = held[name] = store.hidden_name(name)
    return found


Version = tuple[int, int]  # (which watch, its data_version): no two watches' compare equal
_WATCHES = itertools.count(1)
_MAKING = threading.Lock()


class _Watch:
    """A connection of its own to a SQLite store, used for nothing but data_version. Each
    connection counts from its own start, so a version is only compared with one read
    from the same watch (`serial`)."""

    def __init__(self, path: str) -> None:
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        # timeout=0: never wait on a lock (this is asked on the event loop); a busy
        # database is an error, and the caller reads the mark instead.
        self.conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=0)
        self.lock = threading.Lock()
        self.serial = next(_WATCHES)

    def version(self) -> Version:
        with self.lock:
            row = self.conn.execute("PRAGMA data_version").fetchone()
        return self.serial, int(row[0])


def version_now(store: Store) -> Version | None:
    """What moves whenever anyone commits to the store (SQLite), or None where there is no
    such cheap question (PostgreSQL, a store in memory): then read the mark."""
    watch: _Watch | bool | None = store.plaintext_caches.get("data_version")
    if watch is None:
        with _MAKING:  # one watch per store: two made at once would each count from 2
            watch = store.plaintext_caches.get("data_version")
            if watch is None:
                watch = store.plaintext_caches["data_version"] = _new_watch(store)
    if not isinstance(watch, _Watch):
        return None
    try:
        return watch.version()
    except sqlite3.Error:
        return None


def _new_watch(store: Store) -> _Watch | bool:
    engine = store.engine
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return False
    try:
        return _Watch(database)
    except sqlite3.Error:
        return False
