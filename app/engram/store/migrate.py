"""Run the Alembic migrations that ship inside the package.

Opening a store that is already current loads no Alembic (issue 20 item 10): its revision
is one row read with SQLAlchemy, compared with `HEAD`. Alembic, and the scripts it
compiles, are imported only to upgrade a store or to name the revisions it can upgrade from.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, inspect, text

if TYPE_CHECKING:
    from alembic.config import Config

_SCRIPTS = Path(__file__).parent / "migrations"

# The newest revision in migrations/versions. A new migration changes it too:
# tests/unit/test_issue20_startup.py checks it against Alembic's own reading of the scripts.
HEAD = "0008"

_VERSION_TABLE = "alembic_version"  # Alembic's own table, its name by default


class RevisionUnreadable(Exception):
    """The version table names more than one revision, which Alembic never writes."""


Hook = Callable[[Connection], None]


def _config(
    connection: Connection, record_every_row: Hook | None = None, sign_heads: Hook | None = None
) -> Config:
    config = _config_no_connection()
    config.attributes["connection"] = connection
    if record_every_row is not None:
        config.attributes["record_every_row"] = record_every_row
    if sign_heads is not None:
        config.attributes["sign_heads"] = sign_heads
    return config


def head_revision() -> str:
    """The newest schema revision this code knows."""
    return HEAD


@functools.cache  # the scripts ship with the code; reading them compiles every one of
def scripts_head() -> str:  # them, holding the GIL (a verify stalled the window for it)
    """The newest revision as Alembic reads it from the scripts (what `HEAD` must say)."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_config_no_connection()).get_current_head()
    assert head is not None
    return head


def _config_no_connection() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    return config


def current_revision(connection: Connection) -> str | None:
    """The revision a database is at (None if never migrated), read as Alembic reads it:
    no version table, or an empty one, is None; more than one row is refused."""
    if not inspect(connection).has_table(_VERSION_TABLE):
        return None
    rows = connection.execute(text(f"SELECT version_num FROM {_VERSION_TABLE}")).scalars().all()
    if len(rows) > 1:
        raise RevisionUnreadable(f"{_VERSION_TABLE} holds {len(rows)} revisions")
    return str(rows[0]) if rows else None


@functools.cache
def known_revisions() -> frozenset[str]:
    """Every schema revision this code can upgrade from."""
    from alembic.script import ScriptDirectory

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
    `sign_heads` the head of every existing chain (0008)."""
    from alembic import command

    command.upgrade(_config(connection, record_every_row, sign_heads), to)
