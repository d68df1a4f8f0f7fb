"""The one place that knows which database is underneath.

SQLite (the embedded default) gets WAL, synchronous=FULL, secure_delete and write
transactions that take the lock up front; erasure ends with a WAL checkpoint that truncates
the log. Other SQLAlchemy URLs (PostgreSQL) get plain transactions; their erasure relies on
destroyed keys (crypto-shredding) and the server's own vacuuming.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, make_url, text


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


def make_engine(url: str) -> Engine:
    """An engine configured for durability and erasure on this dialect."""
    if not is_sqlite(url):
        return create_engine(url, pool_pre_ping=True)
    engine = create_engine(url, connect_args={"timeout": 15, "isolation_level": None})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute("PRAGMA secure_delete=ON")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        # Writers take the lock at BEGIN so two writers never deadlock upgrading a read lock.
        mode = "IMMEDIATE" if connection.get_execution_options().get("write") else "DEFERRED"
        connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


def after_erasure(engine: Engine) -> dict[str, Any]:
    """Push erased pages out of the WAL into the (zeroed) database file and truncate the WAL."""
    if engine.dialect.name != "sqlite":
        return {"wal_checkpoint": "not applicable"}
    with engine.connect() as connection:
        row = connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").one()
    busy, log_frames, checkpointed = (int(value) for value in row)
    return {
        "wal_checkpoint": "complete" if busy == 0 else "busy",
        "frames": log_frames,
        "checkpointed": checkpointed,
    }


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
