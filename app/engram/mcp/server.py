"""`engram mcp`: the agent's tools over stdio for any MCP client (JSON-RPC 2.0, one message
per line).

The host starts one server per conversation and says whose it is (`--person`,
`--conversation`): that attribution is fixed for the server's life, so no tool call can
reach another person or conversation (H6, P3, W6). Tools offered:

- the five conversation-history tools, bound to that conversation;
- `memory_recall` (R1, R2);
- the typed memory tools the agent's configuration enables, within the host's allowance.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import IO, Any

from engram import __version__
from engram.control.views import recall_json
from engram.model.agents import AgentConfig
from engram.model.errors import EngramError, NotAllowed
from engram.model.ids import ConversationId, person_id
from engram.runtime import agents, history, memory_tools
from engram.runtime.context import Attribution, recall_turn
from engram.runtime.conversations import require_conversation
from engram.runtime.tool_calls import LIMIT_SCHEMA, function_tool, limit_arg, run_tool
from engram.store.store import Store

log = logging.getLogger(__name__)

PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")
RECALL = function_tool(
    "memory_recall",
    "What is remembered about the person you are talking with that this conversation may "
    "use, best first.",
    {"limit": {**LIMIT_SCHEMA, "description": "12 by default, 25 at most"}},
    [],
)
PARSE_ERROR, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS = -32700, -32600, -32601, -32602


@dataclass(frozen=True, slots=True)
class Bound:
    """What the host fixed when it started the server."""

    store: Store
    attribution: Attribution
    config: AgentConfig
    host_allows: Collection[str]


def bind(
    store: Store,
    person: str,
    conversation: str,
    agent: str | None,
    host_allows: Collection[str] | None,
) -> Bound:
    """Check the attribution once, at start: the person must take part in the conversation."""
    subject = person_id(person)
    info = require_conversation(store, ConversationId(conversation))
    if subject not in info.participants:
        raise NotAllowed(f"{person} is not a participant of conversation {conversation}.")
    config = agents.agent_config(store, agent or info.agent)
    allowed = set(host_allows) if host_allows is not None else set(memory_tools.DEFINITIONS)
    return Bound(store, Attribution(subject, info.id), config, allowed)


def tool_list(bound: Bound) -> list[dict[str, Any]]:
    """The tools in MCP's shape (name, description, inputSchema)."""
    definitions = [
        *history.TOOL_DEFINITIONS,
        RECALL,
        *memory_tools.tool_definitions(bound.config, bound.host_allows),
    ]
    return [
        {
            "name": d["function"]["name"],
            "description": d["function"]["description"],
            "inputSchema": d["function"]["parameters"],
        }
        for d in definitions
    ]


def call_tool(bound: Bound, name: str, arguments: Any) -> dict[str, Any]:
    """Run one tool; the answer is JSON text, and refusals come back as errors, not crashes."""
    if name in {d["function"]["name"] for d in history.TOOL_DEFINITIONS}:
        answer = history.dispatch(
            bound.store, bound.attribution.conversation, name, arguments or {}
        )
    elif name == "memory_recall":
        answer = run_tool(arguments or {}, lambda args: _recall(bound, args))
    else:
        answer = memory_tools.dispatch(
            bound.store, bound.attribution, bound.config, bound.host_allows, name, arguments or {}
        )
    return {
        "content": [{"type": "text", "text": json.dumps(answer, ensure_ascii=False)}],
        "structuredContent": answer,
        "isError": "error" in answer,
    }


def _recall(bound: Bound, args: dict[str, Any]) -> dict[str, Any]:
    result = recall_turn(bound.store, bound.attribution, limit=limit_arg(args), record_usage=True)
    return recall_json(result)


def answer(bound: Bound, message: Any) -> dict[str, Any] | None:
    """The response to one JSON-RPC message (None for notifications and for responses)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return _error(None, INVALID_REQUEST, "Not a JSON-RPC 2.0 message.")
    if "method" not in message:
        return None  # a client's response to us: never answered
    method, ident = message["method"], message.get("id")
    if "id" not in message:
        return None  # a notification (initialized, cancelled…): nothing to say
    if not isinstance(ident, str | int) or isinstance(ident, bool):
        return _error(None, INVALID_REQUEST, "An id must be a string or a number (not null).")
    params = message.get("params", {})
    if not isinstance(params, dict):
        return _error(ident, INVALID_PARAMS, "params must be an object.")
    if method == "initialize":
        asked = params.get("protocolVersion")
        return _result(
            ident,
            {
                "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "engram", "version": __version__},
            },
        )
    if method == "ping":
        return _result(ident, {})
    if method == "tools/list":
        return _result(ident, {"tools": tool_list(bound)})
    if method == "tools/call":
        name = params.get("name")
        if not isinstance(name, str) or name not in {t["name"] for t in tool_list(bound)}:
            return _error(ident, INVALID_PARAMS, f"There is no tool {name!r} here.")
        try:
            return _result(ident, call_tool(bound, name, params.get("arguments")))
        except EngramError as error:  # e.g. the conversation was deleted meanwhile
            return _result(ident, call_tool_error(str(error)))
    return _error(ident, NO_METHOD, f"There is no method {method!r}.")


def call_tool_error(message: str) -> dict[str, Any]:
    """A tool failure as MCP reports it: a result flagged isError."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def serve(bound: Bound, lines: Iterable[str], out: IO[str]) -> None:
    """Read messages line by line (a batch is a JSON array), answer each on its own line,
    until input ends. Nothing a client sends ends the session."""
    for line in lines:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            reply: Any = _error(None, PARSE_ERROR, "Not valid JSON.")
        else:
            if isinstance(message, list):
                replies = [r for m in message if (r := _safely(bound, m)) is not None]
                reply = replies or None
                if not message:
                    reply = _error(None, INVALID_REQUEST, "An empty batch.")
            else:
                reply = _safely(bound, message)
        if reply is not None:
            out.write(json.dumps(reply) + "\n")  # ASCII: valid on any stdout encoding
            out.flush()


def _safely(bound: Bound, message: Any) -> dict[str, Any] | None:
    try:
        return answer(bound, message)
    except Exception:  # one bad call never ends the session
        log.exception("the MCP server failed on a message")
        return _error(None, -32603, "Something went wrong inside Engram.")


def _result(ident: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
