"""`engram mcp`: the agent's tools on the official MCP SDK's low-level server.

The SDK owns the wire: the handshake (it answers the newest protocol version it offers),
JSON-RPC framing, concurrent requests, cancellation, progress and the transports (stdio,
Streamable HTTP); mcp/inbound.py judges what a client sends first, so a broken request is
answered too (mcp/stdio.py, mcp/http.py). This module maps Engram's tool layer
(mcp/tools.py) onto it:

- every tool has a title, annotations (read-only, destructive, idempotent hints) and an
  outputSchema, and a successful call returns structuredContent that validates against it;
- each call runs on a worker thread, so a call waiting on the store never holds up
  another request (a `ping` answers while a write waits for the database);
- a cancelled read-only call is abandoned at once; a cancelled write finishes or rolls
  back in its own transaction (nothing half written) and is never answered;
- the agent's configuration is read again on every call, and the client is sent
  `notifications/tools/list_changed` when the tools it may use change;
- the person's assembled block is a resource and a prompt (mcp/block.py).

Listing tools, resources or prompts never starts the session's own conversation (when
the host named none); the first call that acts for the person does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from engram import __version__
from engram.mcp import block
from engram.mcp.tools import INSTRUCTIONS, KNOWN_TOOLS, Bound, bind, call
from engram.model.errors import EngramError
from engram.runtime.tool_calls import ToolSpec

log = logging.getLogger(__name__)
WATCH_SECONDS = 1.0  # how often an idle session looks for a changed configuration


@dataclass(eq=False)
class ToolWatch:
    """The tool names a client was last shown, so a change can be announced."""

    bound: Bound
    shown: tuple[str, ...] | None = None
    session: ServerSession | None = None  # the latest one, for announcements between calls
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    async def offered(self, session: ServerSession | None = None) -> list[ToolSpec]:
        """The tools right now; announces a change since the client last looked."""
        specs = await anyio.to_thread.run_sync(self.bound.offered)
        names = tuple(s.name for s in specs)
        async with self.lock:
            changed = self.shown is not None and names != self.shown
            self.shown = names
            if session is not None:
                self.session = session
            target = session or self.session
        if changed and target is not None:
            await target.send_tool_list_changed()
        return specs

    async def run(self) -> None:
        """Look for configuration changes while the client is quiet."""
        while True:
            await anyio.sleep(WATCH_SECONDS)
            if self.shown is None:
                continue
            try:
                await self.offered()
            except Exception:  # a store hiccup or a closed client: try again later
                log.debug("the tool watch failed once", exc_info=True)


def as_mcp_tool(spec: ToolSpec) -> types.Tool:
    """A tool specification in MCP's shape."""
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=spec.output,
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=False,
        ),
    )


def build_server(bound: Bound, *, watch_idle: bool = True) -> Server[Any]:
    """An SDK server for one bound person (and their conversation)."""
    watch = ToolWatch(bound)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        try:
            offered = await watch.offered(ctx.session)
        except EngramError as error:  # the store cannot be read (a server down, a full disk)
            raise MCPError(code=INTERNAL_ERROR, message=str(error)) from None
        return types.ListToolsResult(tools=[as_mcp_tool(s) for s in offered])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            specs = {s.name: s for s in await watch.offered(ctx.session)}
        except EngramError as error:  # which tools the agent has is in the store
            return refusal(str(error))
        spec = specs.get(params.name)
        if spec is None:
            if params.name not in KNOWN_TOOLS:
                raise MCPError(code=INVALID_PARAMS, message=f"There is no tool {params.name!r}.")
            return refusal(f"The tool {params.name!r} is not available to this agent now.")
        await ctx.session.report_progress(0, 1, f"{spec.title}…")
        work = partial(call, bound, spec.name, params.arguments or {})
        try:
            # A cancelled read is dropped at once; a write is left to finish or roll back.
            answer = await anyio.to_thread.run_sync(work, abandon_on_cancel=spec.read_only)
        except Exception:
            log.exception("the MCP tool %s failed", spec.name)
            raise MCPError(
                code=INTERNAL_ERROR, message="Something went wrong inside Engram; see its log."
            ) from None
        await ctx.session.report_progress(1, 1, "done")
        if "error" in answer:
            return refusal(str(answer["error"]))
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(answer, ensure_ascii=False))],
            structured_content=answer,
        )

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[block.BLOCK_RESOURCE])

    async def list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await block.read_resource(bound, params.uri)

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[block.BLOCK_PROMPT])

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        return await block.get_prompt(bound, params)

    @asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as group:
            if watch_idle:
                group.start_soon(watch.run)
            yield {}
            group.cancel_scope.cancel()

    return Server(
        "engram",
        version=__version__,
        title="Engram memory",
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def refusal(message: str) -> types.CallToolResult:
    """A tool that refused: one sentence, flagged isError, so the model can correct itself."""
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def options(server: Server[Any]) -> Any:
    """The initialization options: tools, announcing list changes."""
    return server.create_initialization_options(NotificationOptions(tools_changed=True))


async def serve_stdio(bound: Bound) -> None:
    """Serve over stdin/stdout until the client closes them."""
    from engram.mcp.stdio import serve_stdio_session

    server = build_server(bound)
    try:
        await serve_stdio_session(server, options(server))
    except BaseExceptionGroup as group:
        # The host closed our stdout (it stopped, or it piped us into something that
        # did): the CLI stops quietly on a broken pipe, as for any other command.
        broken, rest = group.split((BrokenPipeError, anyio.BrokenResourceError))
        if broken is None or rest is not None:
            raise
        raise BrokenPipeError("the MCP client closed its end") from None


def serve_http(bound: Bound, listen: Any) -> int:
    """Serve over Streamable HTTP at /mcp, behind the project API key check."""
    from engram.api.server import run_app
    from engram.mcp.http import mcp_http_app

    return run_app(mcp_http_app(bound, listen), listen, "the MCP server", "/mcp")


__all__ = ["Bound", "bind", "build_server", "serve_http", "serve_stdio"]
