"""Issue 9 item 5, the admin tables (C3): a person who configured an agent or created an
API key (the person themself on a one-person store, or `--actor` given as their id) is named
in `agents.updated_by`, `agent_config_history.actor` and `api_keys.created_by`. After they
are erased, their id appears nowhere in the files in clear: those rows name them by their
keyed pseudonym, the signed ledger still matches every row, and verify reports a pseudonym
there that no erasure record explains."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engram.runtime import api_keys
from engram.store import pseudonyms, schema
from engram.store.store import Store

ERASED = "zq7-erased-admin"
SUGGEST = {"memory": {"learning": {"mode": "suggest"}}}
AUTOMATIC = {"memory": {"learning": {"mode": "automatic"}}}
ADMIN_COLUMNS = [
    ("agents", "updated_by"),
    ("agent_config_history", "actor"),
    ("api_keys", "created_by"),
]


def _every_file(root: Path) -> bytes:
    """Every file under the test's folder: the store, its -wal/-shm and side files, the
    checkpoint and the anchors kept in the (temporary) user data folder."""
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def _administers(cli: Any, tmp_path: Path) -> str:
    """The person, acting under their own id, configures an agent, changes its configuration
    (a second history row) and creates an API key; returns the key."""
    config = tmp_path / "agent-config" / "coach.json"
    config.parent.mkdir()
    for settings in (SUGGEST, AUTOMATIC):
        config.write_text(json.dumps(settings))
        done = cli("--actor", ERASED, "agents", "set", "coach", "--config", str(config))
        assert done.code == 0, done.err
    config.unlink()  # the file is the operator's, not the store's
    created = cli("--actor", ERASED, "keys", "create", "--label", "ci", "--json")
    assert created.code == 0, created.err
    added = cli(
        "notes", "add", "--person", ERASED, "--text", "likes tea", "--kind", "fact",
        "--scope", "direct",
    )  # fmt: skip
    assert added.code == 0, added.err
    return str(created.json()["key"])


def _erase(cli: Any) -> dict[str, Any]:
    erased = cli("person", "erase", ERASED, "--confirm", ERASED, "--json")
    assert erased.code == 0, erased.err
    return dict(erased.json())


@pytest.fixture
def cli_only(store: Store) -> None:
    """The test drives the store through the CLI alone (each command opens and closes it)."""
    store.close()


@pytest.mark.usefixtures("cli_only")
def test_issue9_item5_C3_an_erased_administrator_is_nowhere_in_the_files(
    cli: Any, store_path: Path, tmp_path: Path
) -> None:
    key = _administers(cli, tmp_path)
    assert ERASED.encode() in _every_file(tmp_path)  # the scan can find it
    report = _erase(cli)

    assert ERASED.encode() not in _every_file(tmp_path)
    assert report["pseudonymized_rows"] == 4  # the agent, two history rows, the key
    verified = cli("verify", "--json")
    assert verified.code == 0, verified.err
    assert verified.json()["ok"] is True and verified.json()["problems"] == []

    # The rows stay, naming the person by their pseudonym; the key keeps working.
    store = Store.open(str(store_path), passphrase="correct horse battery staple")
    try:
        alias = pseudonyms.pseudonym(store, ERASED)
        record = api_keys.check_key(store, key)
        assert record is not None and record.created_by == alias
    finally:
        store.close()
    listed = cli("agents", "list", "--json").json()
    assert [r["updated_by"] for r in listed] == [alias]
    history = cli("agents", "history", "coach", "--json").json()
    assert [r["by"] for r in history] == [alias, alias]
    assert [r["created_by"] for r in cli("keys", "list", "--json").json()] == [alias]


@pytest.mark.usefixtures("cli_only")
@pytest.mark.parametrize(("table", "column"), ADMIN_COLUMNS)
def test_issue9_item5_C3_a_tampered_pseudonym_in_an_admin_row_is_reported(
    cli: Any, store_path: Path, tmp_path: Path, table: str, column: str
) -> None:
    """After a real erase, swapping the pseudonym in one admin row for another one (a name
    nobody was erased under) is reported as such, not only as a ledger mismatch."""
    _administers(cli, tmp_path)
    _erase(cli)
    forged = "~" + "0" * 32
    with sqlite3.connect(store_path) as raw:
        changed = raw.execute(f"update {table} set {column} = ?", (forged,)).rowcount
    raw.close()
    assert changed >= 1
    verified = cli("verify", "--json")
    assert verified.code == 3
    problems = verified.json()["problems"]
    assert f"{table}: a row names {forged}, but no erasure record erased anyone by that name" in (
        problems
    )


def test_issue9_item5_C3_every_actor_column_is_declared() -> None:
    """Every clear column that can name who did something is in `schema.ACTOR_COLUMNS`, so
    an erase renames it and verify checks it; a new such column cannot be forgotten."""
    actorish = {
        (table.name, column.name)
        for table in schema.metadata.tables.values()
        for column in table.columns
        if column.name in {"actor", "author"} or column.name.endswith("_by")
    }
    declared = {(column.table.name, column.name) for column in schema.ACTOR_COLUMNS}
    assert actorish <= declared
    assert set(ADMIN_COLUMNS) <= declared
