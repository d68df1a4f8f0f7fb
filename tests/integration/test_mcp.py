"""`engram mcp` driven by the official MCP SDK's own client against a real subprocess,
over stdio and over Streamable HTTP (issue 10; H6, P2, R1, W6)."""

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
import jsonschema
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.agents import set_agent
from engram.runtime.conversations import append_turn, record_tool_call, start_conversation
from engram.store.store import Store
from tests.conftest import PASSPHRASE

ANA = PersonId("ana")
ALL_ON = {"memory": {"tools": {"search": True, "remember": True, "update": True, "forget": True}}}


def _server_args(store_path: Path, *args: str) -> StdioServerParameters:
    # Global options after the command, as hosts write them (issue 10 item 2).
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "engram", "mcp", "--store", str(store_path)]
        + ["--passphrase-env", "TEST_PASSPHRASE", *args],
        env={**os.environ, "TEST_PASSPHRASE": PASSPHRASE},
    )


@asynccontextmanager
async def _stdio(
    store_path: Path, *args: str, on_message: Callable[[Any], Any] | None = None
) -> AsyncIterator[ClientSession]:
    async def handler(message: Any) -> None:
        if on_message is not None:
            on_message(message)

    async with (
        stdio_client(_server_args(store_path, *args)) as (read, write),
        ClientSession(read, write, read_timeout_seconds=30, message_handler=handler) as session,
    ):
        yield session


def _setup(store: Store, config: dict[str, Any] = ALL_ON) -> tuple[str, str, str, str]:
    set_agent(store, "helper", config, "ops")
    mine = start_conversation(store, [ANA], agent="helper")
    turn = append_turn(store, mine.id, role="user", author=ANA, text="My cello lesson is Friday.")
    call = record_tool_call(
        store, mine.id, name="calendar", arguments="{}", result="Cello lesson 17:00."
    )
    other = start_conversation(store, [ANA, PersonId("ben")], agent="helper")
    append_turn(store, other.id, role="user", author=ANA, text="cello in the other chat")
    note = add_note(PersonSession(store, ANA, ANA), "Plays the cello.", Kind.FACT, Scope.DIRECT)
    store.close()
    return mine.id, turn, call, note


def _valid(tool: types.Tool, result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert tool.output_schema is not None
    jsonschema.validate(result.structured_content, tool.output_schema)
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert json.loads(text.text) == result.structured_content
    return dict(result.structured_content)


def _refused(result: types.CallToolResult) -> str:
    assert result.is_error
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    return text.text


def test_issue10_item1_every_tool_over_stdio_with_the_sdk_client(
    store: Store, store_path: Path
) -> None:
    """Handshake at the SDK's newest version, titles, annotations, outputSchema, and every
    tool with valid and invalid arguments; ids of another conversation stay out (H6)."""
    mine, turn, call, note = _setup(store)

    async def scenario() -> None:
        args = ("--person", "ana", "--conversation", mine)
        async with _stdio(store_path, *args) as session:
            hello = await session.initialize()
            assert hello.protocol_version == LATEST_HANDSHAKE_VERSION
            assert hello.instructions and "portable" in hello.instructions
            assert hello.capabilities.tools and hello.capabilities.tools.list_changed
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == {
                "conversation_find",
                "conversation_read_turn",
                "conversation_read_tool_result",
                "conversation_recent_turns",
                "conversation_list_tool_calls",
                "memory_recall",
                "memory_search",
                "memory_remember",
                "memory_update_item",
                "memory_forget",
            }
            for tool in tools.values():
                assert tool.title and tool.annotations and tool.output_schema
                assert tool.annotations.read_only_hint is (
                    tool.name.startswith("conversation_")
                    or tool.name in ("memory_recall", "memory_search")
                )
            forget = tools["memory_forget"].annotations
            assert forget is not None and forget.destructive_hint and forget.idempotent_hint
            remember = tools["memory_remember"].annotations
            assert remember is not None and not remember.destructive_hint
            assert not remember.idempotent_hint

            async def ok(name: str, **arguments: Any) -> dict[str, Any]:
                return _valid(tools[name], await session.call_tool(name, arguments))

            async def refused(name: str, **arguments: Any) -> str:
                return _refused(await session.call_tool(name, arguments))

            found = await ok("conversation_find", query="cello", conversation="elsewhere")
            assert [m["turn_id"] for m in found["matches"] if m.get("turn_id") == turn] == [turn]
            assert "other chat" not in json.dumps(found)  # its own conversation only (H6)
            assert (await ok("conversation_read_turn", turn_id=turn))["text"].startswith("My")
            assert (await ok("conversation_read_tool_result", call_id=call))["removed"] is False
            assert len((await ok("conversation_recent_turns", limit=5))["turns"]) == 1
            assert [c["call_id"] for c in (await ok("conversation_list_tool_calls"))["calls"]] == [
                call
            ]
            recalled = await ok("memory_recall")
            assert [n["text"] for n in recalled["notes"]] == ["Plays the cello."]
            searched = await ok("memory_search", query="cello")
            assert [i["item_id"] for i in searched["items"]] == [note]
            proposed = await ok("memory_remember", text="Has cello on Fridays.", kind="fact")
            assert proposed["status"] == "pending"  # W6: a person approves it first
            corrected = await ok("memory_update_item", item_id=note, text="Plays the viola.")
            assert corrected["status"] == "pending"
            assert (await ok("memory_forget", item_id=note))["forgotten"] is True

            # Argument errors name the field, in one sentence, flagged isError.
            assert "'query'" in await refused("conversation_find")
            assert "'limit'" in await refused("conversation_find", query="x", limit=2.5)
            assert "'mode'" in await refused("conversation_find", query="x", mode="fuzzy")
            assert "'turn_id'" in await refused("conversation_read_turn", turn_id=7)
            assert "no turn" in await refused("conversation_read_turn", turn_id="t_nope")
            assert "'call_id'" in await refused("conversation_read_tool_result")
            assert "'limit'" in await refused("conversation_recent_turns", limit="five")
            assert "'bogus'" in await refused("conversation_list_tool_calls", bogus=1)
            assert "'limit'" in await refused("memory_recall", limit=True)
            assert "'query'" in await refused("memory_search")
            assert "'kind'" in await refused("memory_remember", text="x", kind="rumour")
            assert "'text'" in await refused("memory_update_item", item_id=note)
            assert "no item" in await refused("memory_forget", item_id=note)  # already closed
            with pytest.raises(Exception, match="no tool"):
                await session.call_tool("resources_everything", {})
            await session.send_ping()

    anyio.run(scenario)


def test_issue10_item1_a_blocked_write_neither_blocks_ping_nor_survives_cancel(
    store: Store, store_path: Path
) -> None:
    """Requests run concurrently: while a write waits for the database, ping answers; a
    cancelled write is never answered and the session goes on."""
    mine, _, _, _ = _setup(store)

    async def scenario() -> None:
        blocker = sqlite3.connect(store_path, isolation_level=None)
        async with _stdio(store_path, "--person", "ana", "--conversation", mine) as session:
            await session.initialize()
            blocker.execute("BEGIN IMMEDIATE")  # every writer now waits
            try:
                async with anyio.create_task_group() as group:
                    cancel = anyio.CancelScope()

                    async def write() -> None:
                        with cancel:
                            await session.call_tool(
                                "memory_remember", {"text": "Likes tea.", "kind": "preference"}
                            )

                    group.start_soon(write)
                    await anyio.sleep(0.5)
                    started = time.monotonic()
                    with anyio.fail_after(5):
                        await session.send_ping()
                    assert time.monotonic() - started < 2
                    cancel.cancel()  # the SDK client sends notifications/cancelled
            finally:
                blocker.execute("ROLLBACK")
                blocker.close()
            listed = await session.call_tool("memory_search", {"query": "cello"})
            assert not listed.is_error  # the session carries on

    anyio.run(scenario)


def test_issue10_item1_a_tool_turned_off_mid_session_refuses_and_is_announced(
    store: Store, store_path: Path
) -> None:
    """P2: the configuration is read on every call; the client hears list_changed."""
    mine, _, _, note = _setup(store)
    seen: list[str] = []

    def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        seen.append(str(getattr(root, "method", "")))

    async def scenario() -> None:
        args = ("--person", "ana", "--conversation", mine)
        async with _stdio(store_path, *args, on_message=on_message) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            assert "memory_forget" in names
            reopened = Store.open(str(store_path), passphrase=PASSPHRASE)
            set_agent(reopened, "helper", {"memory": {"tools": {"search": True}}}, "ops")
            reopened.close()
            refused = await session.call_tool("memory_forget", {"item_id": note})
            assert "not available" in _refused(refused)
            with anyio.fail_after(10):
                while "notifications/tools/list_changed" not in seen:
                    await anyio.sleep(0.1)
            names = [t.name for t in (await session.list_tools()).tools]
            assert "memory_forget" not in names and "memory_search" in names

    anyio.run(scenario)


def test_issue10_item2_mcp_needs_its_person_from_the_host(store: Store, store_path: Path) -> None:
    """The person is the host's trusted identity (P3); since issue 16 the conversation may
    be left out (the session starts its own), the person never."""
    store.close()
    env = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE}
    env.pop("ENGRAM_PERSON", None)
    env.pop("ENGRAM_CONVERSATION", None)
    command = [sys.executable, "-m", "engram", "mcp", "--store", str(store_path)]
    command += ["--passphrase-env", "TEST_PASSPHRASE"]
    done = subprocess.run(command, input="", capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1 and "give --person (or ENGRAM_PERSON)" in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_issue10_item1_garbage_on_stdin_never_ends_the_session(
    store: Store, store_path: Path
) -> None:
    """Lines that are not JSON, absurd nesting and bytes that are not UTF-8 are answered
    -32700 (id null); the requests after them are still answered, with their ids."""
    mine, _, _, _ = _setup(store)
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-03-26",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    lines = json.dumps(hello).encode() + b"\n"
    lines += b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'
    lines += b"this is not json\n" + b"[" * 30_000 + b"\n" + b'{"bad": "\xff\xfe"}\n'
    lines += b'{"jsonrpc": "2.0", "id": 10, "method": "ping"}\n'
    params = _server_args(store_path, "--person", "ana", "--conversation", mine)
    done = subprocess.run(
        [params.command, *params.args], input=lines, capture_output=True, env=params.env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    replies = {r["id"]: r for r in map(json.loads, done.stdout.decode().splitlines())}
    assert replies[1]["result"]["protocolVersion"] == "2025-03-26"  # an older client is met
    assert replies[10] == {"jsonrpc": "2.0", "id": 10, "result": {}}
    assert replies[None]["error"]["code"] == -32700
    assert b"Traceback" not in done.stderr


def test_issue10_item1_streamable_http_behind_the_api_key(store: Store, store_path: Path) -> None:
    """The same tools over the SDK's Streamable HTTP client; no key, no session."""
    import re

    import httpx
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from engram.runtime import api_keys

    _, key = api_keys.create_key(store, "host", "ops")
    mine, _, _, note = _setup(store)
    params = _server_args(store_path, "--person", "ana", "--conversation", mine)
    command = [params.command, *params.args, "--transport", "http", "--port", "0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=params.env)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        found = re.search(r"http://[^ ]+/mcp", line)
        assert found, line
        url = found.group(0)
        denied = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=10)
        assert denied.status_code == 401 and "API key" in denied.json()["error"]
        headers = {
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        for body, code, request_id in [
            (b'{"jsonrpc":"2.0","id":7,"method":"ping","params":"\xff"}', -32700, 7),
            (b'{"jsonrpc":"2.0","id":8,"method":"ping","params":[1]}', -32600, 8),
            (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
            (b"\xff{", -32700, None),
        ]:
            # Was -32602 with pydantic's multi-line report and id null (or, for id true, a
            # 202 that answered nothing).
            bad = httpx.post(url, content=body, headers=headers, timeout=10)
            answer = bad.json()
            assert bad.status_code == 400 and answer["id"] == request_id, answer
            assert answer["error"]["code"] == code and "\n" not in answer["error"]["message"]

        async def scenario() -> None:
            client = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
            async with (
                client,
                streamable_http_client(url, http_client=client) as (read, write),
                ClientSession(read, write, read_timeout_seconds=30) as session,
            ):
                hello = await session.initialize()
                assert hello.protocol_version == LATEST_HANDSHAKE_VERSION
                tools = {t.name: t for t in (await session.list_tools()).tools}
                searched = await session.call_tool("memory_search", {"query": "cello"})
                items = _valid(tools["memory_search"], searched)["items"]
                assert [i["item_id"] for i in items] == [note]
                assert "'query'" in _refused(await session.call_tool("memory_search", {}))

        anyio.run(scenario)
    finally:
        server.terminate()
        server.wait(timeout=10)


def _raw_session(store_path: Path, conversation: str, body: bytes) -> tuple[list[Any], bytes]:
    """`engram mcp` fed a handshake and then `body`, stdin closed at once; what it wrote."""
    hello = {
        "jsonrpc": "2.0",
        "id": "hello",
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    lines = json.dumps(hello).encode() + b"\n"
    lines += b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n' + body
    params = _server_args(store_path, "--person", "ana", "--conversation", conversation)
    done = subprocess.run(
        [params.command, *params.args],
        input=lines,
        capture_output=True,
        env=params.env,
        timeout=120,
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-2_000:]
    replies = [
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)  # the SDK reads them
        for line in done.stdout.splitlines()
    ]
    return replies, done.stderr


def test_issue10_item1_each_broken_request_gets_one_error_with_its_id_over_stdio(
    store: Store, store_path: Path
) -> None:
    """The fuzz run's finding: invalid UTF-8 inside a JSON string, list or string params, a
    missing method, a wrong jsonrpc version went unanswered. Each identifiable request now
    gets exactly one -32700/-32600 with its id, garbage one with id null, and a ping after
    each still answers: no byte ends the session."""
    mine, _, _, _ = _setup(store)
    broken: list[tuple[bytes, int, Any]] = [
        (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":"\xff"}', -32700, 9),
        (
            b'{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"name":"\xc3("}}',
            -32700,
            "u",
        ),
        (b'{"jsonrpc":"2.0","id":11,"method":"ping","params":[1, 2]}', -32600, 11),
        (b'{"jsonrpc":"2.0","id":12,"method":"ping","params":"text"}', -32600, 12),
        (b'{"jsonrpc":"2.0","id":13}', -32600, 13),
        (b'{"jsonrpc":"1.0","id":14,"method":"ping"}', -32600, 14),
        (b'{"jsonrpc":"2.0","id":"s","method":"ping","params":{"a":"\\udc80"}}', -32700, "s"),
        (b"\xff\xfe\xfd\x00\x01", -32700, None),
        (b"this is not json", -32700, None),
        (b"[" * 30_000, -32700, None),
        (b'[{"jsonrpc":"2.0","id":15,"method":"ping"}]', -32600, None),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":3,"method":"ping"}\r', 0, 3),  # CRLF framing is fine
    ]
    body = b"".join(
        line + b"\n" + b'{"jsonrpc":"2.0","id":"alive-%d","method":"ping"}\n' % n
        for n, (line, _, _) in enumerate(broken)
    )
    replies, _ = _raw_session(store_path, mine, body)
    errors = [r for r in replies if isinstance(r, types.JSONRPCError)]
    pings = [r.id for r in replies if isinstance(r, types.JSONRPCResponse)]
    alive = ["hello", 3, *(f"alive-{n}" for n in range(len(broken)))]
    assert sorted(map(str, pings)) == sorted(map(str, alive))  # answered concurrently
    expected = sorted(((code, rid) for _, code, rid in broken if code), key=repr)
    assert sorted(((e.error.code, e.id) for e in errors), key=repr) == expected
    assert all(e.error.message.endswith(".") and "\n" not in e.error.message for e in errors)


def test_issue10_item1_a_host_that_closes_our_stdout_gets_no_traceback(
    store: Store, store_path: Path
) -> None:
    """A host that stops reading (or dies) closes the pipe the answers go to: the server
    stops quietly, like any command whose output is cut, never with a traceback."""
    mine, _, _, _ = _setup(store)
    params = _server_args(store_path, "--person", "ana", "--conversation", mine)
    server = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=params.env,
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdout.close()  # the reading end is gone before anything is answered
    pings = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % n for n in range(50))
    try:
        server.stdin.write(pings)
        server.stdin.close()
    except BrokenPipeError:
        pass  # it may already have stopped
    assert server.wait(timeout=120) is not None and server.stderr is not None
    err = server.stderr.read()
    server.stderr.close()
    assert b"Traceback" not in err and b"Error" not in err, err[-2_000:]
    assert server.returncode == 0


def test_issue10_item1_requests_sent_before_stdin_closes_are_all_answered(
    store: Store, store_path: Path
) -> None:
    """A client that writes its requests and closes stdin used to get exit 0 and no answer
    to those still running: the SDK cancels them at end of input. Each gets its answer."""
    mine, _, _, _ = _setup(store)
    calls = b"".join(
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_search",'
        b'"arguments":{"query":"cello"}}}\n{"jsonrpc":"2.0","id":"p%d","method":"ping"}\n' % (n, n)
        for n in range(40)
    )
    replies, _ = _raw_session(store_path, mine, calls)
    answered = sorted(str(r.id) for r in replies if not isinstance(r, types.JSONRPCNotification))
    assert answered == sorted(
        ["hello", *(str(n) for n in range(40)), *(f"p{n}" for n in range(40))]
    )
    results = [r for r in replies if isinstance(r, types.JSONRPCResponse) and isinstance(r.id, int)]
    assert len(results) == 40 and all(not r.result.get("isError") for r in results)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
def test_issue10_item1_the_sdk_client_gets_an_error_for_a_malformed_request(
    store: Store, store_path: Path
) -> None:
    """Through the SDK's own stdio client transport: a request with list params is answered
    -32600 under its id (the client's wait ends), and the session carries on."""
    from mcp.shared.message import SessionMessage

    mine, _, _, _ = _setup(store)

    async def scenario() -> None:
        params = _server_args(store_path, "--person", "ana", "--conversation", mine)
        async with stdio_client(params) as (read, write):
            hello = types.JSONRPCRequest(
                jsonrpc="2.0",
                id=1,
                method="initialize",
                params={
                    "protocolVersion": LATEST_HANDSHAKE_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "sdk", "version": "1"},
                },
            )
            bad = types.JSONRPCRequest.model_construct(
                jsonrpc="2.0", id=2, method="tools/list", params=["not", "named"]
            )
            ping = types.JSONRPCRequest(jsonrpc="2.0", id=3, method="ping")
            replies: dict[Any, Any] = {}
            with anyio.fail_after(30):
                for message in (hello, bad, ping):
                    await write.send(SessionMessage(message))
                    while message.id not in replies:
                        got = await read.receive()
                        assert not isinstance(got, Exception), got
                        replies[getattr(got.message, "id", None)] = got.message
            assert isinstance(replies[2], types.JSONRPCError)
            assert replies[2].error.code == -32600 and "params" in replies[2].error.message
            assert isinstance(replies[3], types.JSONRPCResponse)

    anyio.run(scenario)
