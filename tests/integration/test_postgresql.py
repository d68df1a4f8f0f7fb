"""The same store on PostgreSQL: create, demo, verify, delete a conversation, erase, and two
writers appending to one journal at once."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from engram.control import forensics, notes
from engram.control.conversations import delete_conversation
from engram.control.demo import build_demo
from engram.control.erase import erase_person
from engram.control.session import PersonSession
from engram.model.errors import ChangedOutsideEngram
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime import agents, api_keys
from engram.runtime.conversations import start_conversation
from engram.store import crypto
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE


def test_demo_verify_delete_and_erase_on_postgresql(postgres_url: str, tmp_path: Path) -> None:
    build_demo(postgres_url, passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    store = Store.open(postgres_url, passphrase=PASSPHRASE)
    try:
        assert verify(store).ok
        # Issue 15 item 7: the streamed export (keyset pages) is the whole document here too
        maya = PersonSession(store, PersonId("maya"), "staff:pg")
        whole = forensics.export_person(maya)
        forensics.write_export(maya, tmp_path / "maya.json")
        streamed = json.loads((tmp_path / "maya.json").read_text())
        streamed["exported_at"] = whole["exported_at"]
        assert streamed == whole
        assert forensics.audit_log(maya)[-1]["action"] == (
            "exported everything kept, as JSON, to a file"
        )
        sam = PersonSession.open(store, "sam")
        from engram.runtime.conversations import conversations_of

        first = conversations_of(store, PersonId("sam"))[0]
        result = delete_conversation(sam, first.id)
        assert result.done and result.report["raw_file_scan"]["found"] == 0
        report = erase_person(PersonSession.open(store, "maya"), "maya").to_json()
        assert "person:maya" in report["keys_destroyed"]
        check = verify(store)
        assert check.ok, check.problems
    finally:
        store.close()


def test_two_writers_never_fork_a_journal_on_postgresql(postgres_url: str) -> None:
    store = Store.create(postgres_url, passphrase=PASSPHRASE)
    try:
        start_conversation(store, [PersonId("ana")])
        errors: list[Any] = []

        def writer(tag: str) -> None:
            other = Store.open(postgres_url, passphrase=PASSPHRASE)
            try:
                session = PersonSession.open(other, "ana")
                for index in range(15):
                    notes.add_note(session, f"{tag} {index}", Kind.FACT, Scope.DIRECT)
            except Exception as error:  # surfaced below
                errors.append(error)
            finally:
                other.close()

        threads = [threading.Thread(target=writer, args=(t,)) for t in ("left", "right")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert len(notes.list_notes(PersonSession.open(store, "ana"))) == 30
        assert verify(store).ok
    finally:
        store.close()


def test_issue9_item6_verify_runs_amcheck_on_postgresql_or_says_none_ran(
    postgres_url: str,
) -> None:
    """verify never installs anything: without amcheck it says no page check ran; once an
    administrator adds the extension, its checks run (and pass on a healthy store)."""
    from sqlalchemy import text

    store = Store.create(postgres_url, passphrase=PASSPHRASE)
    try:
        start_conversation(store, [PersonId("ana")])
        before = verify(store)
        assert before.ok, before.problems
        assert any("amcheck extension is not installed" in w for w in before.warnings)
        with store.engine.begin() as connection:
            connection.execute(text("CREATE EXTENSION amcheck"))
        after = verify(store)
        assert after.ok, after.problems
        assert not any("amcheck" in w for w in after.warnings)
    finally:
        store.close()


def test_issue9_item2_the_ledger_catches_a_reinstated_key_on_postgresql(
    postgres_url: str,
) -> None:
    from sqlalchemy import text

    from engram.runtime import api_keys

    store = Store.create(postgres_url, passphrase=PASSPHRASE)
    try:
        key_id, _ = api_keys.create_key(store, "ci", "staff:ops")
        api_keys.revoke_key(store, key_id)
        assert verify(store).ok
        with store.engine.begin() as connection:
            connection.execute(text("UPDATE api_keys SET revoked_at = NULL"))
        assert any(p.startswith(f"api_keys row '{key_id}'") for p in verify(store).problems)
    finally:
        store.close()


def test_issue9_item5_C3_an_erased_administrator_is_renamed_on_postgresql(
    postgres_url: str,
) -> None:
    """The erase renames the person in the admin tables on PostgreSQL too: no text cell of
    any table holds their id afterwards, and the ledger still matches every row."""
    from sqlalchemy import String, Text, select

    from engram.control.persons import ensure_person
    from engram.runtime import agents, api_keys
    from engram.store import pseudonyms, schema

    store = Store.create(postgres_url, passphrase=PASSPHRASE)
    try:
        person = "zq7-erased-admin"
        agents.set_agent(store, "coach", {"memory": {"learning": {"mode": "suggest"}}}, person)
        agents.set_agent(store, "coach", {"memory": {"learning": {"mode": "off"}}}, person)
        _, key = api_keys.create_key(store, "ci", person)
        ensure_person(store, person)
        notes.add_note(PersonSession.open(store, person), "likes tea", Kind.FACT, Scope.DIRECT)
        report = erase_person(PersonSession.open(store, person), person).to_json()
        assert report["pseudonymized_rows"] == 4
        check = verify(store)
        assert check.ok, check.problems
        record = api_keys.check_key(store, key)
        assert record is not None and record.created_by == pseudonyms.pseudonym(store, person)
        with store.read() as conn:
            holding = [
                f"{table.name}.{column.name}"
                for table in schema.metadata.tables.values()
                for column in table.columns
                if isinstance(column.type, String | Text)
                and conn.execute(select(column).where(column.contains(person)).limit(1)).first()
            ]
        assert holding == []
    finally:
        store.close()


def test_issue9_item2_rows_the_ledger_does_not_vouch_for_are_refused_on_postgresql(
    postgres_url: str,
) -> None:
    """A revoked key reinstated and a learning mode switched with raw SQL are refused at
    run time on PostgreSQL too; the legitimate writes before them were vouched for."""
    store = Store.create(postgres_url, passphrase=PASSPHRASE)
    try:
        agents.set_agent(store, "helper", {"memory": {"learning": {"mode": "suggest"}}}, "ops")
        key_id, key = api_keys.create_key(store, "ci", "ops")
        assert api_keys.check_key(store, key) is not None
        api_keys.revoke_key(store, key_id)
        assert api_keys.check_key(store, key) is None
        assert agents.agent_config(store, "helper").learning.mode.value == "suggest"
        with store.engine.begin() as raw:
            raw.execute(text("update api_keys set revoked_at = NULL"))
            raw.execute(text("update agents set config = replace(config, 'suggest', 'automatic')"))
        with pytest.raises(ChangedOutsideEngram):
            api_keys.check_key(store, key)
        with pytest.raises(ChangedOutsideEngram):
            agents.agent_config(store, "helper")
    finally:
        store.close()


def _shape(value: Any) -> Any:
    """A JSON value's keys, all the way down (lists by their first item)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value and isinstance(value[0], dict) else []
    return None


def test_issue18_item9_the_reports_have_one_shape_on_sqlite_and_postgresql(
    postgres_url: str, tmp_path: Path
) -> None:
    """The erasure report and the verify report are one typed value with one JSON shape,
    whatever the backend: a server database's scan looked for nothing and says why."""
    erased: list[dict[str, Any]] = []
    verified: list[dict[str, Any]] = []
    scans: list[dict[str, Any]] = []  # a conversation's deletion reports its scan too
    for url in (str(tmp_path / "file.engram"), postgres_url):
        store = Store.create(url, passphrase=PASSPHRASE)
        try:
            start_conversation(store, [PersonId("maya"), PersonId("sam")])
            notes.add_note(PersonSession.open(store, "maya"), "likes tea", Kind.FACT, Scope.DIRECT)
            own = start_conversation(store, [PersonId("sam")])
            deleted = delete_conversation(PersonSession.open(store, "sam"), own.id)
            scans.append(deleted.to_json()["report"]["raw_file_scan"])
            report = erase_person(PersonSession.open(store, "maya", "staff:pg"), "maya")
            assert report.held, report.sentence()
            erased.append(report.to_json())
            verified.append(forensics.verify_store(store).to_json())
        finally:
            store.close()
    on_file, on_server = erased
    assert _shape(on_file) == _shape(on_server)
    assert "looked_for" in on_server["raw_file_scan"] and on_server["raw_file_scan"]["note"]
    assert on_server["sentence"].startswith("The erasure held: every key")
    assert _shape(verified[0]) == _shape(verified[1])
    assert verified[0]["verdict"] == verified[1]["verdict"] == "intact"
    assert _shape(scans[0]) == _shape(scans[1]) == _shape(on_file["raw_file_scan"])
