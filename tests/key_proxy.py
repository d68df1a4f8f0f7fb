"""A loopback reverse proxy that adds `Authorization: Bearer KEY` to every request, for
clients that cannot send a header of their own (the MCP conformance runner), in front of
`engram mcp --transport http`, which refuses any request without a project API key.

Everything else passes through unchanged, Host and Origin included (the DNS-rebinding
checks must see what the client sent), and responses stream back as they come (SSE).
Tests only; it listens on 127.0.0.1 alone and forwards to one upstream URL.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn

HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"upgrade"}


class KeyProxy:
    """An ASGI app forwarding to `upstream` (scheme://host:port) with the key added."""

    def __init__(self, upstream: str, key: str) -> None:
        self.upstream, self.key = upstream.rstrip("/"), key
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=None))

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                event = (await receive())["type"]
                if event == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif event == "lifespan.shutdown":
                    await self.client.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        headers = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in scope["headers"]
            if k.lower() not in HOP_BY_HOP and k.lower() != b"authorization"
        ]
        headers.append(("authorization", f"Bearer {self.key}"))
        url = self.upstream + scope["raw_path"].decode("latin-1")
        if scope.get("query_string"):
            url += "?" + scope["query_string"].decode("latin-1")
        request = self.client.build_request(scope["method"], url, headers=headers, content=body)
        try:
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError:
            await send({"type": "http.response.start", "status": 502, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        try:
            out = [
                (k.encode("latin-1"), v.encode("latin-1"))
                for k, v in response.headers.multi_items()
                if k.lower().encode() not in HOP_BY_HOP and k.lower() != "content-length"
            ]
            await send(
                {"type": "http.response.start", "status": response.status_code, "headers": out}
            )
            try:
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except httpx.HTTPError:
                pass  # the upstream cut the stream (it stopped): end ours the same way
            await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()


@contextmanager
def key_proxy(upstream: str, key: str) -> Iterator[int]:
    """Serve the proxy on a free loopback port in a thread; yields the port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(KeyProxy(upstream, key), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the key proxy did not start")
            time.sleep(0.05)
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
