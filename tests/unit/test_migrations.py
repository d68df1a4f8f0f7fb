"""The Alembic baseline creates exactly the schema the code declares."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine

from engram.store import migrate, schema
from engram.store.store import Store


def test_baseline_migration_matches_the_declared_schema(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    with engine.begin() as connection:
        migrate.upgrade(connection)
        assert migrate.current_revision(connection) == migrate.head_revision()
        diff = compare_metadata(MigrationContext.configure(connection), schema.metadata)
    assert diff == []


def test_a_store_records_its_format_and_revision(store: Store) -> None:
    assert store.info.format_version == schema.FORMAT_VERSION
    with store.read() as connection:
        assert migrate.current_revision(connection) == migrate.head_revision()
