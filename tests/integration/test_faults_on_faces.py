"""Issue 15, item 5, on every face of a store held open: a full disk answers HTTP 503 with
one sentence and an MCP tool error with the same sentence, never "damaged" or a 500.

The disk is full for real as far as Engram can tell: SQLite's own page limit
(`PRAGMA max_page_count`) makes every write fail with SQLITE_FULL, the error a full disk
gives (tests/reliability/test_disk_full.py fills a real tmpfs where it can mount one).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from sqlalchemy import event

from engram.api.app import build_app
from engram.mcp import tools as mcp_tools
from engram.mcp.server import build_server
from engram.model.ids import PersonId
from engram.runtime import api_keys
from engram.runtime.agents import set_agent
from engram.runtime.conversations import start_conversation
from engram.store.store import Store

ANA = PersonId("ana")
ITEMS = "/v1/memory/agents/helper/memory/items"


def _fill_up(store: Store) -> None:
    """From now on the database may not grow by a page: SQLITE_FULL on the next write."""

    @event.listens_for(store.engine, "connect")
    def _no_room(dbapi_connection: Any, _record: Any) -> None:
        pages = dbapi_connection.execute("PRAGMA page_count").fetchone()[0]
        dbapi_connection.execute(f"PRAGMA max_page_count = {pages}")

    store.engine.dispose()  # connections made before the limit go


@pytest.fixture
def full(store: Store) -> Iterator[dict[str, Any]]:
    set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
    conversation = start_conversation(store, [ANA], agent="helper").id
    _, key = api_keys.create_key(store, "backend", "ops")
    _fill_up(store)
    yield {
        "headers": {"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"},
        "bound": mcp_tools.bind(store, "ana", conversation, None, None),
    }


def _note(index: int, size: int = 1800) -> dict[str, str]:
    return {"text": f"Note {index}: " + "x" * size, "kind": "fact"}


def _is_the_full_sentence(message: str) -> None:
    assert message.endswith(".") and "\n" not in message, message
    assert "is full; nothing was written — free some space and try again." in message
    assert "damaged" not in message and "restore" not in message


def test_issue15_item5_http_answers_503_with_one_sentence(
    store: Store, full: dict[str, Any]
) -> None:
    made: list[str] = []
    with TestClient(build_app(store)) as http:
        for index in range(40):  # until a write needs a page the database may not have
            answer = http.post(ITEMS, json=_note(index), headers=full["headers"])
            if answer.status_code != 201:
                break
            made.append(answer.json()["id"])
        assert answer.status_code == 503, answer.text
        assert set(answer.json()) == {"error"}
        _is_the_full_sentence(answer.json()["error"])
        listed = http.get(ITEMS, params={"limit": 100}, headers=full["headers"])
        assert listed.status_code == 200  # reading still works, and nothing was half-written
        assert {item["id"] for item in listed.json()["items"]} == set(made)


def test_issue15_item5_an_mcp_tool_error_carries_the_same_sentence(full: dict[str, Any]) -> None:
    async def remember_until_full() -> Any:
        async with Client(build_server(full["bound"], watch_idle=False)) as client:
            for index in range(200):  # a suggestion holds at most 300 characters
                result = await client.call_tool("memory_remember", _note(index, 280))
                if result.is_error:
                    return result
        raise AssertionError("the database never filled up")

    result = anyio.run(remember_until_full)
    _is_the_full_sentence(result.content[0].text)
