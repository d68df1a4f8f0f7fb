"""Issue 9 item 2: the tables outside the chains are covered by the signed ledger, so a
change, deletion, insertion or replayed older value is reported by `verify`, through the
CLI and the Python API alike."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram.model.ids import PersonId
from engram.runtime import agents, api_keys
from engram.runtime.conversations import start_conversation
from engram.store import schema
from engram.store.store import Store
from engram.store.store_info import StoreInfo
from engram.store.verify import verify
from tests.conftest import PASSPHRASE

SUGGEST = {"memory": {"learning": {"mode": "suggest"}}}
AUTOMATIC = {"memory": {"learning": {"mode": "automatic"}}}


def _tamper(store_path: Path, *statements: tuple[str, tuple[Any, ...]]) -> None:
    with sqlite3.connect(store_path) as raw:
        for sql, params in statements:
            raw.execute(sql, params)
    raw.close()


def _problems(store_path: Path, cli: Any) -> list[str]:
    """verify through the Python API and the CLI: both must fail, the same way."""
    store = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        report = verify(store)
    finally:
        store.close()
    result = cli("verify", "--json")
    assert result.code == 3, result.err
    assert "Traceback" not in result.err
    assert result.json()["problems"] == report.problems
    assert not report.ok
    return report.problems


@pytest.fixture
def closed(store: Store, store_path: Path) -> Callable[[], Path]:
    """Close the test store (so raw sqlite3 edits land in a quiet file) and return its path."""

    def close() -> Path:
        assert verify(store).ok
        store.close()
        return store_path

    return close


def test_every_table_names_how_it_is_protected() -> None:
    """schema.PROTECTION covers every table in metadata, and nothing else."""
    assert set(schema.PROTECTION) == set(schema.metadata.tables)
    assert {t.name for t in schema.LEDGER_TABLES} == {
        "store_info",
        "persons",
        "data_keys",
        "agents",
        "agent_config_history",
        "api_keys",
        "pending_erasures",  # a mark deleted behind Engram's back would hide an unfinished erase
    }


def test_issue9_item2_learning_mode_switched_with_its_history_is_caught(
    store: Store, closed: Callable[[], Path], cli: Any
) -> None:
    agents.set_agent(store, "coach", SUGGEST, "staff:ops")
    path = closed()
    _tamper(
        path,
        ("update agents set config = replace(config, 'suggest', 'automatic')", ()),
        ("update agent_config_history set config = replace(config, 'suggest', 'automatic')", ()),
    )
    problems = _problems(path, cli)
    assert any(p.startswith("agents row 'coach'") for p in problems)
    assert any(p.startswith("agent_config_history row 'coach/") for p in problems)


def test_issue9_item2_an_older_signed_configuration_put_back_is_caught(
    store: Store, closed: Callable[[], Path], cli: Any
) -> None:
    """Replaying the row and history as they were before the last change (both once
    validly recorded) is still caught: the ledger knows what each row holds now."""
    agents.set_agent(store, "coach", AUTOMATIC, "staff:ops")
    with store.read() as conn:
        old = dict(conn.execute(schema.agents.select()).mappings().one())
    agents.set_agent(store, "coach", SUGGEST, "staff:ops")
    path = closed()
    _tamper(
        path,
        ("update agents set config = ?, updated_at = ?", (old["config"], old["updated_at"])),
        (
            "delete from agent_config_history where at = (select max(at) from "
            "agent_config_history)",
            (),
        ),
    )
    problems = _problems(path, cli)
    assert any("agents row 'coach': it differs" in p for p in problems)
    assert any(
        "agent_config_history: a row the signed ledger records is missing" in p for p in problems
    )


def test_issue9_item2_a_revoked_key_reinstated_is_caught(
    store: Store, closed: Callable[[], Path], cli: Any
) -> None:
    key_id, key = api_keys.create_key(store, "ci", "staff:ops")
    api_keys.revoke_key(store, key_id)
    assert api_keys.check_key(store, key) is None
    path = closed()
    _tamper(path, ("update api_keys set revoked_at = NULL", ()))
    assert any(f"api_keys row '{key_id}': it differs" in p for p in _problems(path, cli))


def test_issue9_item2_cutting_the_ledger_tail_with_the_row_is_a_rollback(
    store: Store, closed: Callable[[], Path], cli: Any
) -> None:
    """Undo the revocation and delete the ledger entry that recorded it: the ledger is then
    self-consistent, but shorter than the checkpoint saw."""
    key_id, _ = api_keys.create_key(store, "ci", "staff:ops")
    api_keys.revoke_key(store, key_id)
    path = closed()
    _tamper(
        path,
        ("update api_keys set revoked_at = NULL", ()),
        ("delete from ledger where seq = (select max(seq) from ledger)", ()),
    )
    problems = _problems(path, cli)
    assert any(p.startswith("ledger: the store holds") and "checkpoint" in p for p in problems)


def test_issue9_item2_a_deleted_person_row_is_caught(
    store: Store, closed: Callable[[], Path], cli: Any
) -> None:
    start_conversation(store, [PersonId("ana"), PersonId("ben")])
    path = closed()
    _tamper(path, ("delete from persons where id = 'ben'", ()))
    problems = _problems(path, cli)
    assert "persons: a row the signed ledger records is missing (deleted outside Engram)" in (
        problems
    )


def test_issue9_item2_an_inserted_person_row_is_caught(
    store: Store, closed: Callable[[], Path], cli: Any
) -> None:
    start_conversation(store, [PersonId("ana")])
    path = closed()
    _tamper(path, ("insert into persons (id, created_at) values ('mallory', 1)", ()))
    problems = _problems(path, cli)
    assert any(
        p.startswith("persons row 'mallory': it is not in the signed ledger") for p in problems
    )


def test_issue9_item2_a_destroyed_data_key_put_back_is_caught(
    store: Store, closed: Callable[[], Path], cli: Any
) -> None:
    """Re-inserting a key row an erasure destroyed (from an older copy) would undo the
    crypto-shredding; the ledger recorded its removal."""
    from engram.control.erase import erase_person
    from engram.control.session import PersonSession

    start_conversation(store, [PersonId("ana")])
    start_conversation(store, [PersonId("ben")])
    with store.read() as conn:
        row = dict(
            conn.execute(
                schema.data_keys.select().where(schema.data_keys.c.key_ref == "person:ben")
            )
            .mappings()
            .one()
        )
    erase_person(PersonSession.open(store, "ben"), "ben")
    path = closed()
    _tamper(
        path,
        (
            "insert into data_keys (key_ref, wrapped, created_at) values (?, ?, ?)",
            (row["key_ref"], row["wrapped"], row["created_at"]),
        ),
    )
    problems = _problems(path, cli)
    assert any(
        p.startswith("data_keys row 'person:ben': it is not in the signed ledger") for p in problems
    )


def test_issue9_item2_store_info_with_a_recomputed_checksum_is_caught(
    store: Store, closed: Callable[[], Path], cli: Any
) -> None:
    """The info row's checksum tells damage from a wrong key, but anyone can recompute it;
    the ledger's keyed digest cannot be."""
    info = store.info
    path = closed()
    forged = StoreInfo(
        info.id,
        info.format_version,
        info.created_at + 1,
        info.kdf,
        info.salt,
        info.kek_by_passphrase,
        info.keyring_backend,
        info.sealed_signing_seed,
        info.verify_key,
    )
    _tamper(
        path,
        (
            "update store_info set created_at = ?, checksum = ?",
            (forged.created_at, forged.checksum()),
        ),
    )
    assert any(
        p.startswith(f"store_info row '{info.id}': it differs") for p in _problems(path, cli)
    )


def test_issue9_item2_damaged_agent_config_json_is_a_report_and_a_sentence(
    store: Store, closed: Callable[[], Path], cli: Any
) -> None:
    agents.set_agent(store, "coach", SUGGEST, "staff:ops")
    path = closed()
    _tamper(
        path,
        ("update agents set config = '{\"memory\": [1, 2'", ()),
        ("update agent_config_history set config = '[]'", ()),
    )
    assert any(p.startswith("agents row 'coach'") for p in _problems(path, cli))
    for command in (("agents", "list", "--json"), ("agents", "history", "coach", "--json")):
        result = cli(*command)
        assert result.code == 1 and "Traceback" not in result.err
        assert json.loads(result.out)["error"].startswith(
            "The stored configuration of agent 'coach' is damaged"
        )


def test_issue9_item2_an_untouched_store_has_no_ledger_problems(
    store: Store, closed: Callable[[], Path], cli: Any
) -> None:
    """No false positives: agents, keys, people, erasure and re-creation all recorded."""
    from engram.control.erase import erase_person
    from engram.control.session import PersonSession

    agents.set_agent(store, "coach", SUGGEST, "staff:ops")
    agents.set_agent(store, "coach", AUTOMATIC, "staff:ops")
    key_id, _ = api_keys.create_key(store, "ci", "staff:ops")
    api_keys.revoke_key(store, key_id)
    start_conversation(store, [PersonId("ana"), PersonId("ben")])
    erase_person(PersonSession.open(store, "ben"), "ben")
    start_conversation(store, [PersonId("ben")])  # the same id again, after an erase
    path = closed()
    result = cli("verify", "--json")
    assert result.code == 0, result.out
    assert result.json()["ok"] and path.exists()
