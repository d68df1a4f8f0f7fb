"""`engram mcp` over stdin/stdout: the SDK's stdio writer, with our own reader in front.

The SDK's reader decodes stdin leniently and drops every line it cannot validate, so a
broken request is never answered. Ours reads bytes, judges each line (mcp/inbound.py),
answers a broken one itself on the SDK's write stream and passes only valid messages on.

At the end of stdin the SDK's server cancels every request still running, so a client
that sends its requests and closes stdin is left without answers. Ours holds the
server's input open until each request passed on has been answered (or cancelled by the
client), for at most DRAIN_SECONDS.
"""

from __future__ import annotations

import io
import os
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.lowlevel.server import Server
from mcp.shared.message import ServerMessageMetadata, SessionMessage

from engram.mcp.inbound import MAX_MESSAGE_BYTES, Verdict, judge, too_long

DRAIN_SECONDS = 30.0  # how long requests in flight may still answer after stdin ends


@dataclass(eq=False)
class Unanswered:
    """Requests passed to the server that have not been answered yet."""

    ids: Counter[types.RequestId] = field(default_factory=Counter)
    changed: anyio.Event = field(default_factory=anyio.Event)

    def sent(self, request_id: types.RequestId) -> None:
        """A request went to the server."""
        self.ids[request_id] += 1

    def settled(self, request_id: types.RequestId) -> None:
        """The server answered it, or settled it unanswered (the client cancelled it)."""
        if self.ids[request_id] > 0:
            self.ids[request_id] -= 1
        self.ids += Counter()  # drop the zeros
        self.changed.set()

    async def all_settled(self) -> None:
        """Wait until nothing is left to answer."""
        while self.ids:
            self.changed = anyio.Event()
            await self.changed.wait()


async def serve_lines(
    server: Server[Any], options: Any, source: BinaryIO, out: Any, drain: float = DRAIN_SECONDS
) -> None:
    """Serve one session: lines from `source`, everything sent through `out`."""
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    waiting = Unanswered()

    async def read() -> None:
        async with to_server:
            async for verdict in _verdicts(source):
                if verdict.reply is not None:
                    await out.send(SessionMessage(verdict.reply))
                elif verdict.message is not None:
                    await _pass_on(verdict.message, to_server, waiting)
            with anyio.move_on_after(drain):
                await waiting.all_settled()

    async def relay() -> None:
        async with from_server:
            async for item in from_server:
                answer = item.message
                if (
                    isinstance(answer, types.JSONRPCResponse | types.JSONRPCError)
                    and answer.id is not None
                ):
                    waiting.settled(answer.id)
                await out.send(item)

    async with out, anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(relay)
        await server.run(server_reads, server_writes, options)


async def _pass_on(
    message: types.JSONRPCMessage,
    to_server: MemoryObjectSendStream[SessionMessage | Exception],
    waiting: Unanswered,
) -> None:
    if not isinstance(message, types.JSONRPCRequest):
        await to_server.send(SessionMessage(message))
        return
    request_id = message.id

    async def unanswered() -> None:
        waiting.settled(request_id)

    waiting.sent(request_id)
    metadata = ServerMessageMetadata(on_request_unanswered=unanswered)
    await to_server.send(SessionMessage(message, metadata=metadata))


async def _verdicts(source: BinaryIO) -> AsyncIterator[Verdict]:
    """One verdict per non-blank line; a line is cut only at "\\n" (MCP's framing)."""

    def line() -> bytes:
        return source.readline(MAX_MESSAGE_BYTES + 1)

    while raw := await anyio.to_thread.run_sync(line, abandon_on_cancel=True):
        if len(raw) > MAX_MESSAGE_BYTES and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):  # skip the rest of it unread
                raw = await anyio.to_thread.run_sync(line, abandon_on_cancel=True)
            yield too_long()
            continue
        text = raw.removesuffix(b"\n").removesuffix(b"\r")
        if text.strip():
            yield judge(text)


@contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """The wire on fd 0, with fd 0 itself pointed at the null device while serving, as
    the SDK does: a handler or child process that reads stdin reads nothing."""
    if not _backed_by(sys.stdin, 0):
        yield sys.stdin.buffer
        return
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # closefd=False: a reading thread may still be parked on it when serving ends.
        yield os.fdopen(wire, "rb", buffering=io.DEFAULT_BUFFER_SIZE, closefd=False)
    finally:
        os.dup2(wire, 0)


def _backed_by(stream: Any, fd: int) -> bool:
    try:
        return bool(stream.buffer.fileno() == fd)
    except (AttributeError, OSError, ValueError):
        return False


async def serve_stdio_session(server: Server[Any], options: Any) -> None:
    """Serve over the process's stdin and stdout until stdin ends."""
    from mcp.server.stdio import stdio_server

    with claimed_stdin() as source:
        # The SDK keeps stdout (its writer, and fd 1 pointed at stderr while serving);
        # it is given an empty stdin, since the lines come from our reader.
        async with stdio_server(stdin=anyio.wrap_file(io.StringIO())) as (unused, out):
            await unused.aclose()
            await serve_lines(server, options, source, out)
