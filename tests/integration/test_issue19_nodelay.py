"""Issue 19 item 3: TCP_NODELAY on every served socket. A listening socket made with
proto 0 gave accepted connections proto 0, asyncio then never set TCP_NODELAY on them, and
each keep-alive answer written in two pieces waited ~40 ms for the client's delayed ACK.

These tests look at the very sockets a real uvicorn server accepted (the memory API, and
MCP over Streamable HTTP driven by the SDK's own client) while a client is connected."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx
import uvicorn

from engram.api.app import build_app
from engram.api.server import Listen, bind, uvicorn_server
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime import api_keys
from engram.runtime.agents import set_agent
from engram.store.store import Store

ANA = PersonId("ana")


@contextmanager
def serving(app: Any) -> Iterator[tuple[uvicorn.Server, str]]:
    """`app` on the socket `engram serve` and `engram mcp --transport http` listen on."""
    listen = Listen("127.0.0.1", 0, None, None)
    sock = bind(listen)
    server = uvicorn_server(app, listen)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield server, f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def accepted(server: uvicorn.Server) -> list[tuple[int, int]]:
    """(proto, TCP_NODELAY) of every connection the server holds open now."""
    found = []
    for connection in list(server.server_state.connections):
        transport = getattr(connection, "transport", None)
        sock = transport.get_extra_info("socket") if transport is not None else None
        if sock is not None:
            found.append((sock.proto, sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)))
    return found


def test_issue19_item3_the_memory_api_sets_tcp_nodelay_on_accepted_connections(
    store: Store,
) -> None:
    set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
    _, key = api_keys.create_key(store, "backend", "ops")
    headers = {"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"}
    with (
        serving(build_app(store)) as (server, base),
        httpx.Client(base_url=base, headers=headers, timeout=10) as http,  # keep-alive
    ):
        assert http.get("/v1/health").status_code == 200
        assert http.get("/v1/memory/agents/helper/memory/items").status_code in (200, 404)
        seen = accepted(server)
    assert seen, "the server held no connection"
    assert all(nodelay != 0 for _, nodelay in seen), seen
    assert all(proto == socket.IPPROTO_TCP for proto, _ in seen), seen  # asyncio's own check


def test_issue19_item3_mcp_over_http_sets_tcp_nodelay_on_accepted_connections(
    store: Store,
) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from engram.mcp.http import mcp_http_app
    from engram.mcp.server import bind as bind_mcp

    set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
    _, key = api_keys.create_key(store, "host", "ops")
    add_note(PersonSession(store, ANA, ANA), "Plays.", Kind.FACT, Scope.DIRECT, create_person=True)
    app = mcp_http_app(
        bind_mcp(store, "ana", None, "helper", None), Listen("127.0.0.1", 0, None, None)
    )
    seen: list[tuple[int, int]] = []
    with serving(app) as (server, base):

        async def scenario() -> None:
            client = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
            async with (
                client,
                streamable_http_client(f"{base}/mcp", http_client=client) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await session.send_ping()
                seen.extend(accepted(server))

        anyio.run(scenario)
    assert seen, "the server held no connection"
    assert all(nodelay != 0 for _, nodelay in seen), seen
    assert all(proto == socket.IPPROTO_TCP for proto, _ in seen), seen
