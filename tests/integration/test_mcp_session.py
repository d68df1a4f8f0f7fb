"""`engram mcp --person P` without a conversation, as a desktop host runs it (one server per
app, not per chat), driven by the official SDK's stdio client (issue 16 item 2; P3, W6, C1,
S3, H6, A1).

The session starts its own conversation (surface chat, the person its only participant)
the first time a call needs one, never for listing; the block is a resource and a
prompt; every bad input is a tool error (or the JSON-RPC error it owes) in one sentence,
and the server goes on.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.conversation import Surface
from engram.model.event_bodies import ItemUsed, body_as
from engram.model.events import EventType
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.agents import set_agent
from engram.runtime.conversations import append_turn, conversations_of, start_conversation
from engram.store import journal
from engram.store.store import Store
from tests.conftest import PASSPHRASE

ANA = PersonId("ana")
ALL_ON = {"memory": {"tools": {"search": True, "remember": True, "update": True, "forget": True}}}
BLOCK = "engram://memory/block"


def _params(store_path: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "engram", "mcp", "--store", str(store_path)]
        + ["--passphrase-env", "TEST_PASSPHRASE", *args],
        env={**os.environ, "TEST_PASSPHRASE": PASSPHRASE},
    )


@asynccontextmanager
async def _session(store_path: Path, *args: str) -> AsyncIterator[ClientSession]:
    async with (
        stdio_client(_params(store_path, *args)) as (read, write),
        ClientSession(read, write, read_timeout_seconds=30) as session,
    ):
        await session.initialize()
        yield session


def _setup(store: Store) -> str:
    """Ana with a private note, and an older conversation of hers the session must not see."""
    set_agent(store, "helper", ALL_ON, "ops")
    earlier = start_conversation(store, [ANA], agent="helper")
    append_turn(store, earlier.id, role="user", author=ANA, text="My cello lesson is Friday.")
    add_note(PersonSession(store, ANA, ANA), "Plays the cello.", Kind.FACT, Scope.DIRECT)
    store.close()
    return earlier.id


def _conversations(store_path: Path) -> list[Any]:
    reopened = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        return conversations_of(reopened, ANA)
    finally:
        reopened.close()


def _usage(store_path: Path) -> list[tuple[str, str | None]]:
    """(via, cause conversation) of every usage record in Ana's journal."""
    reopened = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        with reopened.read() as conn:
            events = list(journal.events(conn, ANA))
    finally:
        reopened.close()
    return [
        (body_as(e.body, ItemUsed).via_name, e.cause.conversation if e.cause else None)
        for e in events
        if e.type is EventType.ITEM_USED
    ]


def _eventually(check: Callable[[], bool], seconds: float = 10.0) -> bool:
    """True once `check` is (usage is written after the answer, within moments)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _text(result: types.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return first.text


def test_issue16_item2_a_session_without_conversation_starts_its_own_once_when_needed(
    store: Store, store_path: Path
) -> None:
    """Listing starts nothing; the first call that acts starts one chat with Ana alone
    (so her private note reaches her: S3); every later call, the history tools included,
    uses that same conversation and no other (H6)."""
    earlier = _setup(store)

    async def scenario() -> None:
        async with _session(store_path, "--person", "ana", "--agent", "helper") as session:
            tools = {t.name for t in (await session.list_tools()).tools}
            assert {"conversation_find", "memory_recall", "memory_remember"} <= tools
            (resource,) = (await session.list_resources()).resources
            assert (str(resource.uri), resource.mime_type) == (BLOCK, "text/plain")
            (prompt,) = (await session.list_prompts()).prompts
            assert prompt.name == "memory_block" and not prompt.arguments
            assert [c.id for c in _conversations(store_path)] == [earlier]  # listing: none

            read = await session.read_resource(BLOCK)
            (contents,) = read.contents
            assert isinstance(contents, types.TextResourceContents)
            assert "Plays the cello." in contents.text
            started = [c for c in _conversations(store_path) if c.id != earlier]
            assert len(started) == 1
            own = started[0]
            assert (own.surface, own.participants, own.agent) == (Surface.CHAT, (ANA,), "helper")
            # Recorded as assembly records — after the answer, by the server's usage writer.
            assert _eventually(lambda: ("assembly", own.id) in _usage(store_path))

            got = await session.get_prompt("memory_block")
            (message,) = got.messages
            assert isinstance(message.content, types.TextContent)
            assert message.content.text == contents.text

            # P3: an argument naming someone else is dropped; Ana's note comes back.
            recalled = await session.call_tool("memory_recall", {"person": "ben"})
            assert not recalled.is_error and recalled.structured_content is not None
            assert [n["text"] for n in recalled.structured_content["notes"]] == ["Plays the cello."]
            recent = await session.call_tool("conversation_recent_turns", {})
            assert recent.structured_content == {"turns": []}  # its own, empty chat
            found = await session.call_tool("conversation_find", {"query": "cello"})
            assert found.structured_content is not None
            assert found.structured_content["matches"] == []  # the earlier chat stays out

            bogus = await session.call_tool("conversation_find", {"query": "x", "bogus": 1})
            assert bogus.is_error and "'bogus'" in _text(bogus)
            assert [c.id for c in _conversations(store_path)] == [earlier, own.id]  # once

    anyio.run(scenario)


def test_issue16_item2_the_block_takes_no_person_from_the_client(
    store: Store, store_path: Path
) -> None:
    """The resource and the prompt name nobody: another URI or a prompt argument is refused
    in one sentence (JSON-RPC -32602), and the session goes on (P3, C1)."""
    _setup(store)

    async def scenario() -> None:
        async with _session(store_path, "--person", "ana") as session:
            refused = []
            for attempt in (
                session.read_resource("engram://memory/block?person=ben"),
                session.get_prompt("memory_block", {"person": "ben"}),
                session.get_prompt("everything"),
            ):
                with pytest.raises(MCPError) as caught:
                    await attempt
                refused.append(caught.value.error)
            assert [e.code for e in refused] == [-32602] * 3
            assert all(e.message.endswith(".") and "\n" not in e.message for e in refused)
            assert "takes no arguments" in refused[1].message
            await session.send_ping()

    anyio.run(scenario)


def test_issue16_item2_a_person_the_store_does_not_hold_is_refused_at_start(
    store: Store, store_path: Path
) -> None:
    """A typo in a host's configuration (or a person erased since) is one sentence and exit
    1, and creates nobody: it never becomes a new, empty memory."""
    _setup(store)
    params = _params(store_path, "--person", "anna")
    done = subprocess.run(
        [params.command, *params.args],
        input=b"",
        capture_output=True,
        env=params.env,
        timeout=60,
    )
    err = done.stderr.decode()
    assert done.returncode == 1 and err.count("\n") == 1, err
    assert "no person 'anna'" in err and "engram mcp config" in err
    assert "Traceback" not in err
    reopened = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        with reopened.read() as conn:
            assert not journal.person_exists(conn, PersonId("anna"))
    finally:
        reopened.close()


def test_issue16_item2_a_deleted_conversation_is_a_tool_error_not_a_crash(
    store: Store, store_path: Path
) -> None:
    """Ana deletes the session's conversation (in the inspector, or here the CLI) while the
    host runs: each call after is refused in one sentence; the server stays up."""
    _setup(store)

    async def scenario() -> None:
        async with _session(store_path, "--person", "ana", "--agent", "helper") as session:
            first = await session.call_tool("conversation_recent_turns", {})
            assert not first.is_error
            (own,) = [c for c in _conversations(store_path) if c.agent == "helper"][1:]
            deleted = subprocess.run(
                [sys.executable, "-m", "engram", "--store", str(store_path)]
                + ["--passphrase-env", "TEST_PASSPHRASE", "conversation", "delete", own.id]
                + ["--person", "ana", "--json"],
                capture_output=True,
                text=True,
                env={**os.environ, "TEST_PASSPHRASE": PASSPHRASE},
                timeout=120,
            )
            assert deleted.returncode == 0, deleted.stderr
            for name, arguments in [
                ("conversation_recent_turns", {}),
                ("memory_recall", {}),
                ("memory_remember", {"text": "Likes tea.", "kind": "preference"}),
            ]:
                refused = await session.call_tool(name, arguments)
                assert refused.is_error, (name, refused)
                said = _text(refused)
                assert "was deleted" in said and said.count(".") >= 1 and "\n" not in said
            with pytest.raises(MCPError, match="was deleted"):
                await session.read_resource(BLOCK)
            await session.send_ping()

    anyio.run(scenario)


def test_issue16_item2_oversized_and_invalid_text_are_refused_in_one_sentence(
    store: Store, store_path: Path
) -> None:
    """Text past a tool's limit is a tool error naming the limit; a lone surrogate (text
    that is not valid Unicode) is the JSON-RPC parse error with the request's id; a line
    past the transport's limit is refused; a ping after each is still answered."""
    _setup(store)
    big = "x" * 3_000_000
    lines = [
        {
            "jsonrpc": "2.0",
            "id": "hello",
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        _call("big-remember", "memory_remember", text=big, kind="fact"),
        _call("big-query", "conversation_find", query="y" * 600),
    ]
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    body += (
        b'{"jsonrpc":"2.0","id":"surrogate","method":"tools/call","params":{"name":'
        b'"memory_remember","arguments":{"text":"\\udc80","kind":"fact"}}}\n'
    )
    body += b'{"jsonrpc":"2.0","id":"huge","method":"ping","params":{"x":"' + b"z" * (5 << 20)
    body += b'"}}\n{"jsonrpc":"2.0","id":"alive","method":"ping"}\n'
    params = _params(store_path, "--person", "ana", "--agent", "helper")
    done = subprocess.run(
        [params.command, *params.args], input=body, capture_output=True, env=params.env, timeout=120
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-2000:]
    replies = {r.get("id"): r for r in map(json.loads, done.stdout.splitlines())}
    for request_id, words in (("big-remember", "characters"), ("big-query", "500 characters")):
        result = replies[request_id]["result"]
        (said,) = result["content"]
        assert result["isError"] and words in said["text"] and "\n" not in said["text"]
    assert replies["surrogate"]["error"]["code"] == -32700
    assert replies[None]["error"]["code"] == -32700  # the over-long line: its id unread
    assert replies["alive"]["result"] == {}


def _call(request_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def test_issue16_item2_a_store_busy_with_another_writer_is_a_tool_error(
    store: Store, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While another process holds the write lock past the busy timeout, a call that must
    write (here the session's first one, which starts its conversation) is refused in one
    sentence, nothing is half written, and the same call works once the lock is gone."""
    from mcp import Client

    from engram.mcp.server import bind, build_server
    from engram.store import dialect

    _setup(store)
    monkeypatch.setattr(dialect, "BUSY_TIMEOUT_MS", 300)  # a writer waits 0.3 s, not 15
    opened = Store.open(str(store_path), passphrase=PASSPHRASE)
    before = len(_conversations(store_path))

    async def scenario() -> None:
        server = build_server(bind(opened, "ana", None, "helper", None), watch_idle=False)
        async with Client(server, read_timeout_seconds=30) as client:
            blocker = sqlite3.connect(store_path, isolation_level=None)
            blocker.execute("BEGIN IMMEDIATE")
            try:
                busy = await client.call_tool("conversation_recent_turns", {})
                remembered = await client.call_tool(
                    "memory_remember", {"text": "Likes tea.", "kind": "preference"}
                )
            finally:
                blocker.execute("ROLLBACK")
                blocker.close()
            for refused in (busy, remembered):
                assert refused.is_error and "busy with another writer" in _text(refused)
            assert len(_conversations(store_path)) == before  # nothing half started
            again = await client.call_tool("conversation_recent_turns", {})
            assert not again.is_error, again.content

    try:
        anyio.run(scenario)
    finally:
        opened.close()
    assert len(_conversations(store_path)) == before + 1


@pytest.mark.slow
def test_issue16_item2_over_http_a_call_waiting_out_a_busy_store_gets_its_sentence(
    store: Store, store_path: Path
) -> None:
    """Streamable HTTP: the call waits the store's whole busy timeout (15 s), longer than
    the server's body timeout (10 s), and still gets the one sentence; the stream used to
    be cut at 10 s, so the client saw a broken connection instead."""
    import re

    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from engram.runtime import api_keys

    _, key = api_keys.create_key(store, "host", "ops")
    _setup(store)
    params = _params(store_path, "--person", "ana", "--transport", "http", "--port", "0")
    server = subprocess.Popen(
        [params.command, *params.args], stdout=subprocess.PIPE, text=True, env=params.env
    )
    try:
        assert server.stdout is not None
        found = re.search(r"http://[^ ]+/mcp", server.stdout.readline())
        assert found

        async def scenario() -> None:
            client = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
            async with (
                client,
                streamable_http_client(found.group(0), http_client=client) as (read, write),
                ClientSession(read, write, read_timeout_seconds=60) as session,
            ):
                await session.initialize()
                blocker = sqlite3.connect(store_path, isolation_level=None)
                blocker.execute("BEGIN IMMEDIATE")
                try:
                    busy = await session.call_tool("conversation_recent_turns", {})
                finally:
                    blocker.execute("ROLLBACK")
                    blocker.close()
                assert busy.is_error and "busy with another writer" in _text(busy)
                again = await session.call_tool("conversation_recent_turns", {})
                assert again.structured_content == {"turns": []}

        anyio.run(scenario)
    finally:
        server.terminate()
        server.wait(timeout=30)
