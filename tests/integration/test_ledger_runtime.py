"""Issue 9 item 2, at run time: a row outside the chains that the signed ledger does not
vouch for is refused where it would change behaviour — an API key whose revocation was
cleared behind Engram's back (HTTP, MCP over HTTP), and an agent whose learning mode was
switched with raw SQL (`engram learn`, the HTTP face). `verify` already reports both;
these tests show the runtime no longer acts on them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from engram.api.app import build_app
from engram.model.agents import AgentConfig
from engram.model.errors import ChangedOutsideEngram
from engram.model.ids import PersonId
from engram.runtime import agents, api_keys
from engram.runtime.conversations import start_conversation
from engram.store import ledger_check, schema
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.integration.test_http_api import running

SUGGEST = {"memory": {"tools": {"remember": True}, "learning": {"mode": "suggest"}}}
ITEMS = "/v1/memory/agents/helper/memory/items"
KEY_SENTENCE = (
    "The record of this API key was changed outside Engram, so the key is refused; run "
    "'engram verify' to see what changed."
)


def _raw(path: Path, sql: str) -> None:
    """Change the store file with sqlite3, as someone who can write the file but has no key."""
    with sqlite3.connect(path) as raw:
        assert raw.execute(sql).rowcount >= 1
    raw.close()


def _vouched(store: Store, table: Any, pk: tuple[Any, ...]) -> bool:
    match = table.c[table.primary_key.columns.keys()[0]] == pk[0]
    with store.read() as conn:
        return ledger_check.read_vouched(store.ledger_view, conn, table, match, pk)[1]


def test_issue9_item2_a_revoked_key_reinstated_with_raw_sql_is_refused_over_http(
    store: Store, store_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The revoked ex-operator who can write the file cannot re-enable their own key."""
    agents.set_agent(store, "helper", SUGGEST, "ops")
    start_conversation(store, [PersonId("ana")])
    key_id, key = api_keys.create_key(store, "backend", "ops")
    with running(build_app(store)) as base, httpx.Client(base_url=base, timeout=10) as http:
        bearer = {"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"}
        assert http.get(ITEMS, headers=bearer).status_code == 200
        api_keys.revoke_key(store, key_id)
        assert http.get(ITEMS, headers=bearer).status_code == 401
        _raw(store_path, f"update api_keys set revoked_at = NULL where id = '{key_id}'")
        with pytest.raises(ChangedOutsideEngram) as refused:
            api_keys.check_key(store, key)
        assert refused.value.for_command_line() == KEY_SENTENCE
        answer = http.get(ITEMS, headers=bearer)
        assert answer.status_code == 401 and answer.json() == {"error": KEY_SENTENCE}
        assert KEY_SENTENCE in caplog.text  # the operator's log says it too


def test_issue9_item2_a_learning_mode_switched_with_raw_sql_stops_engram_learn(
    cli: Any, store_path: Path, tmp_path: Path
) -> None:
    """suggest -> automatic by SQL UPDATE (row and history): learn refuses in one sentence,
    exits non-zero, and writes no candidate and no note."""
    assert cli("init").code == 0
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"memory": {"learning": {"mode": "suggest"}}}))
    assert cli("agents", "set", "helper", "--config", str(config)).code == 0
    conversation = cli(
        "conversation", "start", "--participants", "ana", "--agent", "helper"
    ).out.strip()
    args = ["--role", "user", "--author", "ana", "--text", "I moved to Oslo."]
    assert cli("conversation", "append", conversation, *args).code == 0
    for table in ("agents", "agent_config_history"):
        _raw(store_path, f"update {table} set config = replace(config, 'suggest', 'automatic')")
    result = cli("learn")
    sentence = (
        "The settings of agent 'helper' were changed outside Engram, so they are not used; "
        "run 'engram verify' to see what changed."
    )
    assert result.code != 0 and result.err.strip() == sentence and "Traceback" not in result.err
    refused = cli("learn", "--json")
    assert refused.code != 0 and refused.json()["error"] == sentence
    listed = cli("candidates", "list", "--person", "ana", "--json")
    assert listed.code == 0 and listed.json() == []
    assert cli("notes", "list", "--person", "ana", "--all", "--json").json() == []


def test_issue9_item2_a_forged_agent_is_refused_by_the_http_face_in_one_sentence(
    store: Store, store_path: Path
) -> None:
    agents.set_agent(store, "helper", SUGGEST, "ops")
    _, key = api_keys.create_key(store, "backend", "ops")
    _raw(store_path, "update agents set config = replace(config, 'suggest', 'automatic')")
    with pytest.raises(ChangedOutsideEngram):
        agents.agent_config(store, "helper")
    with running(build_app(store)) as base, httpx.Client(base_url=base, timeout=10) as http:
        headers = {"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"}
        answer = http.get(ITEMS, headers=headers)
    assert answer.status_code == 500
    assert answer.json()["error"].startswith(
        "The settings of agent 'helper' were changed outside Engram, so they are not used;"
    )


def test_issue9_item2_legitimate_writes_are_vouched_for_at_once(
    store: Store, store_path: Path
) -> None:
    """Creating a key, setting an agent and revoking keep working, and each row is vouched
    for right after — including writes made by another open store (the cached map follows
    the ledger's head). An agent never configured keeps its defaults; one whose row was
    deleted outside Engram is refused (the ledger says it exists)."""
    assert agents.agent_config(store, "never") == AgentConfig("never")
    assert _vouched(store, schema.agents, ("never",))
    key_id, key = api_keys.create_key(store, "ci", "ops")
    assert _vouched(store, schema.api_keys, (key_id,))
    assert api_keys.check_key(store, key) is not None
    agents.set_agent(store, "helper", SUGGEST, "ops")
    assert _vouched(store, schema.agents, ("helper",))
    assert agents.agent_config(store, "helper").learning.mode.value == "suggest"
    other = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        automatic = {"memory": {"learning": {"mode": "automatic"}}}
        agents.set_agent(other, "helper", automatic, "ops")
        api_keys.revoke_key(other, key_id)
    finally:
        other.close()
    assert agents.agent_config(store, "helper").learning.mode.value == "automatic"
    assert api_keys.check_key(store, key) is None  # revoked legitimately: simply unknown
    assert _vouched(store, schema.api_keys, (key_id,))
    _raw(store_path, "delete from agents where name = 'helper'")
    with pytest.raises(ChangedOutsideEngram):
        agents.agent_config(store, "helper")
