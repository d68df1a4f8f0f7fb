"""A read-only engine that sees every commit another process makes (verify's child)."""

from __future__ import annotations

import sqlite3
import urllib.parse
from typing import Any

from sqlalchemy import Engine, create_engine, event

from engram.store.dialect import BUSY_TIMEOUT_MS, make_engine, sqlite_path


def engine_seeing_commits(url: str, read_only_media: bool) -> Engine:
    """Read-only: `mode=ro` sees every commit the parent makes (unlike `immutable`); a
    server, or read-only media, opens as the parent opened it."""
    path = sqlite_path(url)
    if path is None or read_only_media:
        return make_engine(url, read_only=path is not None)
    uri = f"file:{urllib.parse.quote(str(path))}?mode=ro"
    engine = create_engine(
        url,
        creator=lambda: sqlite3.connect(
            uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None
        ),
    )

    @event.listens_for(engine, "connect")
    def _read_only(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute("PRAGMA query_only=ON")

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN DEFERRED")

    return engine
