"""Issue 19 item 3, the HTTP face keeps up with its framework: a 405 says which methods the
path does answer (RFC 9110 §15.5.6: the Allow header is required), and a writer that lost
a race on an item gets 409 with one sentence."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from engram.api.app import build_app
from engram.control import notes
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.notes import Note
from engram.model.scope import Kind, Scope
from engram.runtime import api_keys
from engram.runtime.agents import set_agent
from engram.store.store import Store
from tests.integration.test_http_api import Client, running

ANA = PersonId("ana")


def test_issue19_item3_a_405_carries_allow(store: Store) -> None:
    _, key = api_keys.create_key(store, "backend", "ops")
    with TestClient(build_app(store)) as client:
        answer = client.put(
            "/v1/memory/agents/helper/memory/items",
            headers={"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"},
        )
    assert answer.status_code == 405
    allowed = {m.strip() for m in answer.headers["allow"].split(",")}
    assert {"GET", "POST"} <= allowed and "PUT" not in allowed
    assert answer.json()["error"].endswith("does not answer PUT.")


def _racing(
    store: Store, monkeypatch: pytest.MonkeyPatch, loser: Callable[[Client], tuple[int, Any]]
) -> tuple[int, Any]:
    """`loser` reads the note (it is open), then waits while a second request deletes it,
    then writes: it lost the race. Returns its answer."""
    set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
    _, key = api_keys.create_key(store, "backend", "ops")
    session = PersonSession(store, ANA, ANA)
    note = add_note(session, "Plays the cello.", Kind.FACT, Scope.DIRECT, create_person=True)
    first_read, winner_done = threading.Event(), threading.Event()
    real = notes.get_note
    calls = [0]

    def paused(session: PersonSession, note_id: str) -> Note:
        found = real(session, note_id)
        calls[0] += 1
        if calls[0] == 1:  # the loser has read the note open; let the winner go first
            first_read.set()
            assert winner_done.wait(10)
        return found

    monkeypatch.setattr(notes, "get_note", paused)
    with running(build_app(store)) as base:
        answers: list[tuple[int, Any]] = []
        racer = threading.Thread(target=lambda: answers.append(loser(Client(base, key))))
        racer.start()
        assert first_read.wait(10)
        won = Client(base, key)("DELETE", f"{ITEMS}/{note}", {"reason": "old"})
        assert won[0] == 200, won
        winner_done.set()
        racer.join(10)
    (answer,) = answers
    return answer


ITEMS = "/v1/memory/agents/helper/memory/items"


@pytest.mark.parametrize("loser", ["delete", "patch text", "patch scope"])
def test_issue19_item3_a_lost_race_on_an_item_is_409_in_one_sentence(
    store: Store, monkeypatch: pytest.MonkeyPatch, loser: str
) -> None:
    """Two writers on one note: the one whose write comes second gets 409 and a sentence
    about the note's state (it was 403 with the journal's wording)."""

    def send(client: Client) -> tuple[int, Any]:
        note = next(iter(client("GET", ITEMS)[1]["items"]))["id"]
        if loser == "delete":
            return client("DELETE", f"{ITEMS}/{note}", {})
        body = {"text": "Plays the viola."} if loser == "patch text" else {"scope": "portable"}
        return client("PATCH", f"{ITEMS}/{note}", body)

    status, body = _racing(store, monkeypatch, send)
    assert status == 409, body
    assert body["error"] == (
        "The note “Plays the cello.” is already closed (deleted); only active notes can be changed."
    )


def test_issue19_item3_mcp_over_http_answers_keep_alive_calls_without_the_nagle_stall(
    store: Store, store_path: Path
) -> None:
    """`engram mcp --transport http` serves from the same TCP_NODELAY socket as the API:
    JSON-RPC pings on one keep-alive connection answer in milliseconds, not the ~40 ms a
    delayed ACK costs each answer written in pieces."""
    import re
    import subprocess
    import sys
    import time

    from tests.conftest import PASSPHRASE

    set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
    _, key = api_keys.create_key(store, "host", "ops")
    add_note(PersonSession(store, ANA, ANA), "Plays.", Kind.FACT, Scope.DIRECT, create_person=True)
    store.close()
    command = [sys.executable, "-m", "engram", "mcp", "--store", str(store_path)]
    command += ["--passphrase-env", "TEST_PASSPHRASE", "--person", "ana", "--agent", "helper"]
    command += ["--transport", "http", "--port", "0"]
    env = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE}
    env.pop("PYTHONUNBUFFERED", None)
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        found = re.search(r"http://[^ ]+/mcp", server.stdout.readline())
        assert found, "no address printed"
        headers = {
            "Authorization": f"Bearer {key}",
            "Accept": "application/json, text/event-stream",
        }
        with httpx.Client(timeout=10, headers=headers) as http:
            hello = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            }
            opened = http.post(found.group(0), json=hello)
            assert opened.status_code == 200, opened.text
            session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
            done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            http.post(found.group(0), json=done, headers=session)
            times = []
            for n in range(1, 12):
                started = time.perf_counter()
                ping = {"jsonrpc": "2.0", "id": n, "method": "ping"}
                answer = http.post(found.group(0), json=ping, headers=session)
                times.append(time.perf_counter() - started)
                assert answer.status_code == 200, answer.text
        assert sorted(times)[len(times) // 2] < 0.030, times
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.parametrize("write", ["create", "patch", "delete"])
def test_issue19_item3_an_item_write_on_a_store_busy_with_another_writer_is_503_retry_after(
    store: Store, store_path: Path, monkeypatch: pytest.MonkeyPatch, write: str
) -> None:
    """Another process holds the write lock past the busy timeout: the memory routes' writes
    answer 503 with Retry-After and one sentence (never a 500 and a closed connection),
    nothing is written, and the same request succeeds once the lock is gone."""
    import sqlite3

    from engram.store import dialect
    from tests.conftest import PASSPHRASE

    set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
    _, key = api_keys.create_key(store, "backend", "ops")
    session = PersonSession(store, ANA, ANA)
    note = add_note(session, "Plays the cello.", Kind.FACT, Scope.DIRECT, create_person=True)
    store.close()
    monkeypatch.setattr(dialect, "BUSY_TIMEOUT_MS", 300)
    served = Store.open(str(store_path), passphrase=PASSPHRASE)
    method, path, body = {
        "create": ("POST", ITEMS, {"text": "Likes tea.", "kind": "preference"}),
        "patch": ("PATCH", f"{ITEMS}/{note}", {"text": "Plays the viola."}),
        "delete": ("DELETE", f"{ITEMS}/{note}", {"reason": "old"}),
    }[write]
    headers = {"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"}
    try:
        with (
            running(build_app(served)) as base,
            httpx.Client(base_url=base, headers=headers, timeout=10) as http,
        ):
            other = sqlite3.connect(store_path, isolation_level=None)
            other.execute("BEGIN IMMEDIATE")
            try:
                busy = http.request(method, path, json=body)
                listed = http.get(ITEMS)  # reads go on, on the same connection
            finally:
                other.execute("ROLLBACK")
                other.close()
            assert busy.status_code == 503, busy.text
            assert busy.headers["retry-after"] == "1"
            assert busy.headers.get("connection") != "close"
            assert busy.json()["error"] == (
                "The store is busy with another writer; nothing was written — try again "
                "in a moment."
            )
            assert [i["text"] for i in listed.json()["items"]] == ["Plays the cello."]
            again = http.request(method, path, json=body)
            assert again.status_code in (200, 201), again.text
    finally:
        served.close()


def test_issue19_item3_a_memory_call_takes_two_worker_thread_hops_not_five(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each hop wakes a worker thread and hands the GIL over: FastAPI gave the key check,
    the person header, the binding, the route and the answer's validation one each. Now the
    call is bound in one hop and the route runs in one more (its answer validated on the
    event loop), on a real server, for a read, a write and a conversation route alike."""
    import anyio.to_thread

    set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
    _, key = api_keys.create_key(store, "backend", "ops")
    add_note(PersonSession(store, ANA, ANA), "Plays.", Kind.FACT, Scope.DIRECT, create_person=True)
    real = anyio.to_thread.run_sync
    hops = [0]

    async def counted(*args: Any, **kwargs: Any) -> Any:
        hops[0] += 1
        return await real(*args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    with running(build_app(store)) as base:
        api = Client(base, key)
        for method, path, body, status in (
            ("GET", ITEMS, None, 200),
            ("POST", "/v1/memory/agents/helper/memory/search", {"query": "plays"}, 200),
            ("POST", ITEMS, {"text": "Likes tea.", "kind": "preference"}, 201),
            ("GET", "/v1/memory/agents/helper/memory/conversations", None, 200),
        ):
            hops[0] = 0
            answer = api(method, path, body)
            assert answer[0] == status, answer
            assert hops[0] <= 2, (method, path, hops[0])
        api.http.close()
