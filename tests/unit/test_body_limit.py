"""The body limit's timeout bounds the body only: once it is in, a receive that waits to
hear the client leave (an MCP stream, a call waiting out a busy store) is not cut short."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from engram.api import server
from engram.api.server import BodyLimit


def test_issue16_item2_a_wait_after_the_body_outlasts_the_body_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(server, "BODY_SECONDS", 0.2)
    heard: list[str] = []
    sent: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = await receive()
        heard.append(body["type"])
        heard.append((await receive())["type"])  # waits past BODY_SECONDS for the client
        await send({"type": "http.response.start", "status": 200, "headers": []})

    messages = [{"type": "http.request", "body": b"{}", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await anyio.sleep(0.6)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}
    anyio.run(BodyLimit(app), scope, receive, send)
    assert heard == ["http.request", "http.disconnect"]
    assert sent[0]["status"] == 200


def test_issue16_item2_a_body_that_stops_arriving_is_still_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(server, "BODY_SECONDS", 0.2)
    sent: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await receive()  # the rest of the body never comes

    messages = [{"type": "http.request", "body": b"{", "more_body": True}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await anyio.sleep(5)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}
    anyio.run(BodyLimit(app), scope, receive, send)
    assert sent[0]["status"] == 408
