"""Issue 15, item 5, on PostgreSQL: a server that is stopped, or frozen, is not damage.

With the server down, every command says the server at HOST:PORT does not answer — never
that the store is damaged, never a traceback — and exits non-zero; a store held open (as
`engram serve` and the inspector hold it) answers HTTP 503 and an MCP tool error with the
same sentence. Once the server is back, verify passes and every acknowledged write is there.

Counts per run (recorded for docs/reliability.md): `rounds` stop/start cycles, each running
the commands below once.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from engram.api.app import build_app
from engram.control.notes import add_note
from engram.control.persons import ensure_person
from engram.control.session import PersonSession
from engram.mcp import tools as mcp_tools
from engram.mcp.server import build_server
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime import api_keys
from engram.runtime.agents import set_agent
from engram.runtime.conversations import start_conversation
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.postgres_cluster import Cluster, running_cluster
from tests.reliability.conftest import size

ANA = PersonId("ana")
COMMANDS = [
    ("persons",),
    ("notes", "list", "--person", "ana"),
    ("notes", "add", "--person", "ana", "--text", "Written while down.", "--kind", "fact",
     "--scope", "direct"),
    ("verify",),
    ("export", "--person", "ana"),
]  # fmt: skip
NOT_DAMAGE = ("damaged", "restore", "Traceback", "OperationalError")


@pytest.fixture(scope="module")
def _cluster() -> Iterator[Cluster]:
    with running_cluster() as started:  # initdb takes seconds: one cluster for the module
        yield started


@pytest.fixture
def cluster(_cluster: Cluster) -> Cluster:
    """The module's cluster, running (a test before may have left it stopped)."""
    if not _cluster.running():
        _cluster.start()
    return _cluster


def _true_sentence(message: str, cluster: Cluster) -> None:
    assert message.count("\n") <= 1 and message.strip().endswith("."), message
    assert f"The database server at 127.0.0.1:{cluster.port} does not answer" in message
    assert not any(word in message for word in NOT_DAMAGE), message


def test_issue15_item5_a_stopped_server_is_not_damage_on_the_command_line(
    cluster: Cluster, cli: Any
) -> None:
    url = cluster.create_database("stopped")
    store = Store.create(url, passphrase=PASSPHRASE, use_keyring=False)
    ensure_person(store, "ana")
    acknowledged = {add_note(PersonSession(store, ANA, ANA), "Before.", Kind.FACT, Scope.DIRECT)}
    store.close()
    said: Counter[str] = Counter()
    for _ in range(size(1, 5)):
        cluster.stop()
        for command in COMMANDS:
            done = cli(*command, store=url)
            assert done.code == 1, (command, done.out, done.err)
            _true_sentence(done.err, cluster)
            said[done.err.split(" (")[0]] += 1
        cluster.start()
        added = cli(*COMMANDS[2], store=url)
        assert added.code == 0, added.err
        acknowledged.add(added.out.strip())
        checked = cli("verify", store=url)
        assert checked.code == 0 and "Store intact" in checked.out, checked.out + checked.err
    listed = cli("notes", "list", "--person", "ana", "--json", store=url)
    assert {note["id"] for note in json.loads(listed.out)} == acknowledged  # none lost, none half
    assert len(said) == 1, said  # one sentence, whatever the command


def test_issue15_item5_a_frozen_server_times_out_with_the_same_sentence(
    cluster: Cluster, cli: Any
) -> None:
    url = cluster.create_database("frozen")
    Store.create(url, passphrase=PASSPHRASE, use_keyring=False).close()
    waiting = url + "?connect_timeout=2"  # the default is 10 s; a URL may name its own
    with cluster.frozen():  # it accepts the connection and never answers
        started = time.monotonic()
        done = cli("persons", store=waiting)
        assert time.monotonic() - started < 8
    assert done.code == 1
    _true_sentence(done.err, cluster)


def test_issue15_item5_a_held_store_answers_503_and_a_tool_error_while_the_server_is_down(
    cluster: Cluster,
) -> None:
    url = cluster.create_database("held")
    store = Store.create(url, passphrase=PASSPHRASE, use_keyring=False)
    try:
        set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
        conversation = start_conversation(store, [ANA], agent="helper").id
        _, key = api_keys.create_key(store, "backend", "ops")
        headers = {"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"}
        items = "/v1/memory/agents/helper/memory/items"
        bound = mcp_tools.bind(store, "ana", conversation, None, None)
        with TestClient(build_app(store)) as http:
            made = http.post(
                items, json={"text": "Plays the cello.", "kind": "fact"}, headers=headers
            )
            assert made.status_code == 201, made.text
            cluster.stop()
            for answer in (
                http.get(items, headers=headers),
                http.post(items, json={"text": "Lost?", "kind": "fact"}, headers=headers),
            ):
                assert answer.status_code == 503, answer.text
                assert set(answer.json()) == {"error"}
                _true_sentence(answer.json()["error"], cluster)

            async def remember() -> Any:
                async with Client(build_server(bound, watch_idle=False)) as client:
                    return await client.call_tool(
                        "memory_remember", {"text": "Lives in Oslo.", "kind": "fact"}
                    )

            result = anyio.run(remember)
            assert result.is_error
            _true_sentence(result.content[0].text, cluster)
            cluster.start()
            again = http.get(items, headers=headers)  # the held store reconnects by itself
            assert again.status_code == 200, again.text
            assert [item["id"] for item in again.json()["items"]] == [made.json()["id"]]
    finally:
        store.close()
