"""Run the Alembic migrations that ship inside the package."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

_SCRIPTS = Path(__file__).parent / "migrations"


Hook = Callable[[Connection], None]


def _config(
    connection: Connection, record_every_row: Hook | None = None, sign_heads: Hook | None = None
) -> Config:
    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    config.attributes["connection"] = connection
    if record_every_row is not None:
        config.attributes["record_every_row"] = record_every_row
    if sign_heads is not None:
        config.attributes["sign_heads"] = sign_heads
    return config


@functools.cache  # the scripts ship with the code; reading them compiles every one of
def head_revision() -> str:  # them, holding the GIL (a verify stalled the window for it)
    """The newest schema revision this code knows."""
    script = ScriptDirectory.from_config(_config_no_connection())
    head = script.get_current_head()
    assert head is not None
    return head


def _config_no_connection() -> Config:
    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    return config


def current_revision(connection: Connection) -> str | None:
    """The revision a database is at (None if never migrated)."""
    return MigrationContext.configure(connection).get_current_revision()


@functools.cache
def known_revisions() -> frozenset[str]:
    """Every schema revision this code can upgrade from."""
    script = ScriptDirectory.from_config(_config_no_connection())
    return frozenset(s.revision for s in script.walk_revisions())


def upgrade(
    connection: Connection,
    record_every_row: Hook | None = None,
    sign_heads: Hook | None = None,
    to: str = "head",
) -> None:
    """Bring a database to the newest schema revision (or `to`); `record_every_row` signs
    the rows of an existing store into the ledger when a revision needs it (0005),
    `sign_heads` the head of every existing chain (0007)."""
    command.upgrade(_config(connection, record_every_row, sign_heads), to)
