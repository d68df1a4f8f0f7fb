"""Run the Alembic migrations that ship inside the package."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

_SCRIPTS = Path(__file__).parent / "migrations"


def _config(connection: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
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


def upgrade(connection: Connection) -> None:
    """Bring a database to the newest schema revision."""
    command.upgrade(_config(connection), "head")
