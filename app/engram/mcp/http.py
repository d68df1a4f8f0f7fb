"""`engram mcp --transport http`: the same tools over the SDK's Streamable HTTP transport,
at /mcp, behind the project API key check `engram serve` uses."""

from __future__ import annotations

import json
from typing import Any

from engram.api.routes import MemoryApi, Unauthorized
from engram.api.server import Listen, is_loopback
from engram.mcp.server import build_server
from engram.mcp.tools import Bound


def mcp_http_app(bound: Bound, listen: Listen) -> Any:
    """The ASGI application: the SDK's Streamable HTTP app behind the key check."""
    from mcp.server.transport_security import TransportSecuritySettings

    server = build_server(bound)
    # The SDK turns on DNS-rebinding protection for loopback hosts; beyond loopback, the
    # API key and TLS guard the door.
    security = (
        None
        if is_loopback(listen.host)
        else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    app = server.streamable_http_app(host=listen.host, transport_security=security)
    return KeyCheck(app, MemoryApi(bound.store))


class KeyCheck:
    """Answer 401 unless the request carries a valid project API key."""

    def __init__(self, app: Any, api: MemoryApi) -> None:
        self.app, self.api = app, api

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v for k, v in scope.get("headers") or []}
            authorization = headers.get("authorization", b"").decode("latin-1")
            try:
                import anyio

                await anyio.to_thread.run_sync(self.api.caller, authorization)
            except Unauthorized as refused:
                body = json.dumps({"error": str(refused)}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
