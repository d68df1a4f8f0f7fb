"""The one place that knows which database is underneath.

SQLite (the embedded default) gets WAL, synchronous=FULL, secure_delete and write
transactions that take the lock up front; erasure ends with a WAL checkpoint that truncates
the log. Other SQLAlchemy URLs (PostgreSQL) get plain transactions; their erasure relies on
destroyed keys (crypto-shredding) and the server's own vacuuming.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import urllib.parse
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, exc, make_url, text

from engram.store.lock_guard import LockGuard

BUSY_TIMEOUT_MS = 15_000  # how long a writer waits for another writer
CONNECT_TIMEOUT_S = 10  # how long to wait for a database server to answer a connection


def is_sqlite(url: str) -> bool:
    """Whether a store URL points at SQLite."""
    return make_url(url).get_backend_name() == "sqlite"


def sqlite_path(url: str) -> Path | None:
    """The file behind a SQLite URL (None for in-memory or other databases)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    if parsed.database == ":memory:":
        return None
    return Path(parsed.database)


# (device, inode) of each SQLite file -> how many connections this process has open to it.
# Closing any descriptor of a file drops all of a process's POSIX locks on it, so code that
# would open the file itself must know whether SQLite holds it here (file_check).
_held: dict[tuple[int, int], int] = {}
_held_lock = threading.Lock()


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


# (device, inode) -> the lock guard this process holds on that file while connected.
_guards: dict[tuple[int, int], LockGuard] = {}


def _guard_what_exists(connection: Connection) -> None:
    """Take the guard's locks not held yet: at a transaction's start, so that the connect
    pragmas (journal_mode=WAL needs the file to itself once) ran first; the -shm appears
    after the first read."""
    key = connection.connection.info.get("file_id")
    if key is None:
        return
    with _held_lock:
        guard = _guards.get(key)
        if guard is not None and len(guard.locked) < len(guard.parts):
            guard.hold()


def holds_connection(path: Path) -> bool:
    """Whether this process has a SQLite connection open to the file at `path`."""
    key = _file_id(path)
    with _held_lock:
        return key is not None and _held.get(key, 0) > 0


def read_only_uri(path: Path) -> str:
    """A SQLite URI that reads `path` without writing anything beside it.

    `immutable=1` creates neither -wal nor -shm (plain `mode=ro` must create -shm for a WAL
    database, which read-only media refuse); it is used unless a -wal with content lies
    beside the file, whose committed pages only a WAL-aware `mode=ro` reader sees."""
    wal = path.with_name(path.name + "-wal")
    has_log = wal.exists() and wal.stat().st_size > 0
    mode = "mode=ro" if has_log else "immutable=1"
    return f"file:{urllib.parse.quote(str(path))}?{mode}"


def make_engine(url: str, *, read_only: bool = False) -> Engine:
    """An engine configured for durability and erasure on this dialect; with `read_only`
    (SQLite only), one that opens the file read-only and writes nothing beside it."""
    if not is_sqlite(url):
        # A server that accepts the connection but never answers would otherwise hang every
        # command; a URL that names its own connect_timeout keeps it.
        parsed = make_url(url)
        waits: dict[str, Any] = {}
        if parsed.get_backend_name() == "postgresql" and "connect_timeout" not in parsed.query:
            waits["connect_timeout"] = CONNECT_TIMEOUT_S
        return create_engine(url, pool_pre_ping=True, connect_args=waits)
    path = sqlite_path(url)
    options: dict[str, Any] = {}
    if read_only and path is not None:
        uri = read_only_uri(path)
        options["creator"] = lambda: sqlite3.connect(
            uri,
            uri=True,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
    engine = create_engine(
        url,
        connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "isolation_level": None},
        **options,
    )

    @event.listens_for(engine, "connect")
    def _held_open(_dbapi_connection: Any, record: Any) -> None:
        key = None if path is None else _file_id(path)
        record.info["file_id"] = key
        if key is not None and path is not None:
            with _held_lock:
                _held[key] = _held.get(key, 0) + 1
                if not read_only:  # lock_guard.py: held from the first transaction on
                    _guards.setdefault(key, LockGuard(path))

    @event.listens_for(engine, "close")
    def _let_go(_dbapi_connection: Any, record: Any) -> None:
        key = record.info.pop("file_id", None)
        if key is not None:
            with _held_lock:
                _held[key] -= 1
                if _held[key] <= 0:
                    del _held[key]
                    # Before the last connection closes, so it still cleans up the WAL.
                    guard = _guards.pop(key, None)
                    if guard is not None:
                        guard.release()

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        if read_only:  # reading changes no mode; WAL would need files beside the store
            cursor.execute("PRAGMA query_only=ON")
            cursor.close()
            return
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA secure_delete=ON")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        if not read_only:
            _guard_what_exists(connection)
        # Writers take the lock at BEGIN so two writers never deadlock upgrading a read lock.
        mode = "IMMEDIATE" if connection.get_execution_options().get("write") else "DEFERRED"
        connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


def after_erasure(engine: Engine, wait_ms: int = 200) -> dict[str, Any]:
    """Push erased pages out of the WAL into the (zeroed) database file and truncate the WAL.

    Waits at most `wait_ms` for readers of older snapshots; "busy" means one is still there
    (erasure.finish asks Engram processes to let go and tries again).
    """
    if engine.dialect.name != "sqlite":
        return {"wal_checkpoint": "not applicable"}
    with engine.connect() as connection:
        connection.exec_driver_sql(f"PRAGMA busy_timeout={int(wait_ms)}")
        try:
            row = connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").one()
        finally:
            connection.exec_driver_sql(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    busy, log_frames, checkpointed = (int(value) for value in row)
    return {
        "wal_checkpoint": "complete" if busy == 0 else "busy",
        "frames": log_frames,
        "checkpointed": checkpointed,
    }


def rewrite_pages(engine: Engine) -> dict[str, Any]:
    """Rewrite every page of the database from its live rows (VACUUM), so no page keeps a
    stale copy of a deleted cell: `secure_delete` zeroes a deleted cell where it is, but a
    page the b-tree rebalanced keeps, in its free gap, copies of cells that moved away."""
    if engine.dialect.name != "sqlite":
        return {"rewrite": "not applicable"}
    with engine.connect() as connection:
        # The driver's own connection: VACUUM cannot run in the transaction SQLAlchemy
        # would begin, and it takes the write lock itself.
        driver = connection.connection.driver_connection
        assert driver is not None
        try:
            pages = int(driver.execute("PRAGMA page_count").fetchone()[0])
            driver.execute("VACUUM")
            after = int(driver.execute("PRAGMA page_count").fetchone()[0])
        except sqlite3.Error as error:
            return {"rewrite": "failed", "error": str(error)}
    return {"rewrite": "complete", "pages_before": pages, "pages_after": after}


def lock_chain(connection: Connection, chain_id: str) -> None:
    """Serialise appends to one chain for the rest of the transaction.

    SQLite writers already hold the database lock from BEGIN IMMEDIATE; PostgreSQL takes a
    transaction-scoped advisory lock on the chain's name, so two writers never both read
    the same head and fork the chain.
    """
    if connection.dialect.name == "postgresql":
        connection.execute(
            text("SELECT pg_advisory_xact_lock(hashtextextended(:chain, 0))"), {"chain": chain_id}
        )


def _first(findings: list[str], limit: int, what: str) -> list[str]:
    shown = [f"{what}: {f}" for f in findings[:limit]]
    if len(findings) > limit:
        shown.append(f"{what}: and {len(findings) - limit} more findings")
    return shown


def storage_check(connection: Connection, limit: int = 5) -> tuple[list[str], str | None]:
    """The database's own page-level check: (problems, a note when none could be run).

    SQLite: `PRAGMA integrity_check`. PostgreSQL: the amcheck extension's B-tree and heap
    checks, when an administrator has installed it in this database (verify never installs
    anything); otherwise the note says no check was run.
    """
    if connection.dialect.name == "sqlite":
        try:
            rows = connection.exec_driver_sql("PRAGMA integrity_check(100)").scalars().all()
        except exc.DBAPIError as error:
            return [f"SQLite's integrity check stopped at damage: {error.orig}"], None
        findings = [
            line.strip()
            for row in rows
            for line in str(row).splitlines()
            if line.strip() not in ("", "ok", "*** in database main ***")
        ]
        shown = _first(findings, limit, "SQLite's integrity check")
        if len(rows) >= 100:  # the pragma stops counting there
            shown[-1] = shown[-1].replace(" and ", " and at least ", 1)
        return shown, None
    if connection.dialect.name == "postgresql":
        return _amcheck(connection, limit)
    return [], f"no storage-level check is known for {connection.dialect.name}, so none was run"


def _amcheck(connection: Connection, limit: int) -> tuple[list[str], str | None]:
    version = connection.execute(
        text("SELECT extversion FROM pg_extension WHERE extname = 'amcheck'")
    ).scalar()
    if version is None:
        return [], (
            "PostgreSQL's amcheck extension is not installed in this database, so no "
            "page-level check was run (an administrator can add it: CREATE EXTENSION amcheck)"
        )
    problems: list[str] = []
    indexes = (
        connection.execute(
            text(
                "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                "JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam "
                "WHERE n.nspname = current_schema() AND a.amname = 'btree'"
            )
        )
        .scalars()
        .all()
    )
    for name in indexes:
        try:
            with connection.begin_nested():
                connection.execute(text("SELECT bt_index_check(CAST(:n AS regclass))"), {"n": name})
        except exc.DBAPIError as error:
            problems.append(f"index {name}: {error.orig}")
    if tuple(int(p) for p in str(version).split(".")[:2]) >= (1, 3):
        tables = (
            connection.execute(
                text(
                    "SELECT c.relname FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = current_schema() AND c.relkind = 'r'"
                )
            )
            .scalars()
            .all()
        )
        for name in tables:
            found = connection.execute(
                text("SELECT blkno, msg FROM verify_heapam(CAST(:n AS regclass))"), {"n": name}
            ).all()
            problems.extend(f"table {name} block {b}: {m}" for b, m in found)
    return _first(problems, limit, "amcheck"), None
