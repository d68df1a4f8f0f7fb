"""The Alembic baseline creates exactly the schema the code declares."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, text

from engram.store import migrate, schema
from engram.store.store import Store

# Alembic cannot reflect DESC index columns on SQLite, so these are checked with PRAGMA.
DESCENDING = {"ix_note_rank", "ix_note_rank_all", "ix_note_scope_rank"}


def _declared(name: str) -> list[tuple[str, bool]]:
    index = next(i for i in schema.note_state.indexes if i.name == name)
    columns = []
    for expression in index.expressions:
        words = str(getattr(expression, "name", expression)).split()
        columns.append((words[0], len(words) > 1 and words[1].upper() == "DESC"))
    return columns


def test_baseline_migration_matches_the_declared_schema(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    with engine.begin() as connection:
        migrate.upgrade(connection)
        assert migrate.current_revision(connection) == migrate.head_revision()
        diff = compare_metadata(MigrationContext.configure(connection), schema.metadata)
        for name in DESCENDING:
            rows = connection.execute(text(f"PRAGMA index_xinfo({name})")).all()
            built = [(r.name, bool(r.desc)) for r in rows if r.key]
            assert built == _declared(name), name
    assert [d for d in diff if d[1].name not in DESCENDING] == []


def test_a_store_records_its_format_and_revision(store: Store) -> None:
    assert store.info.format_version == schema.FORMAT_VERSION
    with store.read() as connection:
        assert migrate.current_revision(connection) == migrate.head_revision()


def test_0004_starts_each_agents_history_with_what_it_holds(tmp_path: Path) -> None:
    from alembic import command

    engine = create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    with engine.begin() as connection:
        command.upgrade(migrate._config(connection), "0003")
        connection.execute(
            text(
                "INSERT INTO agents (name, config, updated_at, updated_by) "
                "VALUES ('helper', '{}', 42, 'staff:ops')"
            )
        )
        migrate.upgrade(connection)
        rows = connection.execute(text("SELECT name, at, actor FROM agent_config_history")).all()
    assert [tuple(r) for r in rows] == [("helper", 42, "staff:ops")]
