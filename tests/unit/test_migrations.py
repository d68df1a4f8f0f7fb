"""The Alembic baseline creates exactly the schema the code declares."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, text

from engram.store import migrate, schema
from engram.store.store import Store

# Alembic cannot reflect DESC index columns on SQLite, so these are checked with PRAGMA.
DESCENDING = {"ix_note_rank", "ix_note_rank_all", "ix_note_scope_rank", "ix_note_kind_rank"}


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
        command.upgrade(migrate._config(connection), "0004")
        rows = connection.execute(text("SELECT name, at, actor FROM agent_config_history")).all()
    assert [tuple(r) for r in rows] == [("helper", 42, "staff:ops")]


def test_issue9_item2_0005_signs_an_existing_stores_rows_into_the_ledger(tmp_path: Path) -> None:
    """A store made before the ledger opens, records its rows once, and then verifies; a
    later change to one of those rows is reported."""
    import sqlite3

    from alembic import command

    from engram.control.demo import build_demo
    from engram.store import crypto
    from engram.store.verify import verify
    from tests.conftest import PASSPHRASE

    path = tmp_path / "old.engram"
    build_demo(str(path), passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    store = Store.open(str(path), passphrase=PASSPHRASE)
    checkpoint = store.checkpoint.read()
    assert checkpoint is not None
    # a store from before 0005 never checkpointed a ledger
    del checkpoint.chains[store.hidden_name("ledger")]
    checkpoint.serial += 1
    store.checkpoint._write_base(checkpoint, store.signer)
    store.close()
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        command.downgrade(migrate._config(connection), "0004")
        # before 0005 a conversation's row was stamped a moment before its first entry
        connection.execute(text("UPDATE conversations SET created_at = created_at - 7"))
    engine.dispose()
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name='ledger'").fetchone() == (
            0,
        )
    store = Store.open(str(path), passphrase=PASSPHRASE)
    try:
        report = verify(store)
        assert report.ok, report.problems
        with store.read() as connection:
            assert migrate.current_revision(connection) == migrate.head_revision()
            assert connection.execute(text("SELECT count(*) FROM ledger")).scalar() == 1
    finally:
        store.close()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE persons SET created_at = created_at + 1 WHERE id = 'sam'")
    store = Store.open(str(path), passphrase=PASSPHRASE)
    try:
        assert any("persons row 'sam'" in p for p in verify(store).problems)
    finally:
        store.close()


def test_issue9_item2_0005_refuses_to_record_rows_without_the_store_key(tmp_path: Path) -> None:
    """Recording existing rows needs the signing key; a bare upgrade says so, never skips."""
    import pytest
    from alembic import command

    engine = create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    with engine.begin() as connection:
        command.upgrade(migrate._config(connection), "0004")
        connection.execute(
            text("INSERT INTO persons (id, created_at, sealed_name) VALUES ('ana', 1, NULL)")
        )
        with pytest.raises(RuntimeError, match="needs the unlocked store"):
            migrate.upgrade(connection)
