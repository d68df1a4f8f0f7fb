"""`engram mcp --transport http`: the same tools over the SDK's Streamable HTTP transport,
at /mcp, behind the project API key check `engram serve` uses."""

from __future__ import annotations

import json
from typing import Any

from engram.api.routes import MemoryApi, Unauthorized
from engram.api.server import Listen, is_loopback
from engram.mcp.inbound import MAX_MESSAGE_BYTES, judge
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
    return KeyCheck(BodyCheck(app), MemoryApi(bound.store))


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
                await _send_json(send, 401, body, [(b"www-authenticate", b"Bearer")])
                return
        await self.app(scope, receive, send)


class BodyCheck:
    """Answer a POST body that is not a valid JSON-RPC message with 400 and the JSON-RPC
    error it is owed (mcp/inbound.py), instead of the SDK's -32602 and pydantic report."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        read: list[dict[str, Any]] = []
        body = b""
        while len(body) <= MAX_MESSAGE_BYTES:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                verdict = judge(body)
                if verdict.reply is not None:
                    answer = verdict.reply.model_dump_json(by_alias=True, exclude_unset=True)
                    await _send_json(send, 400, answer.encode())
                    return
                break
        # A valid message, an over-long body (the SDK answers 413) or a gone client:
        # the SDK reads what was read here, then the rest.

        async def replay() -> dict[str, Any]:
            return read.pop(0) if read else await receive()

        await self.app(scope, replay, send)


def _is_json(scope: dict[str, Any]) -> bool:
    for name, value in scope.get("headers") or []:
        if name.lower() == b"content-type":
            return bool(value.split(b";")[0].strip().lower() == b"application/json")
    return False


async def _send_json(
    send: Any, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += extra or []
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
