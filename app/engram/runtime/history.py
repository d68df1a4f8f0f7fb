"""The five conversation-history tools (H1-H6), bound to the turn's conversation.

The host supplies the attribution; no tool takes a conversation or person argument, and
any scope or target fields the model sends are ignored (H6). Unknown ids are errors in the
answer, never exceptions in the host.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import regex

from engram.engine.history_search import (
    FindResult,
    Message,
    clamp,
    cut_middle,
    find_pattern,
    find_relevant,
)
from engram.model.conversation import EntryKind, LogEntry
from engram.model.errors import EngramError, InvalidInput, NotFound
from engram.model.ids import ConversationId
from engram.runtime.conversations import require_conversation
from engram.store import conversation_log
from engram.store.store import Store

READ_TURN_CHARS = 4_000
PATTERN_TIMEOUT_S = 0.25
MAX_QUERY_CHARS = 500
REMOVED = "this tool result was removed by an administrator; its content is not available"
# Arguments a model might send to reach past its own conversation: ignored (H6).
IGNORED_ARGUMENTS = frozenset(
    {"conversation", "conversation_id", "person", "person_id", "user", "scope", "audience"}
)


@dataclass(frozen=True, slots=True)
class HistoryView:
    """One conversation's log with texts, as the tools read it."""

    entries: list[LogEntry]
    texts: dict[int, str | None]

    def turns(self) -> list[LogEntry]:
        return [e for e in self.entries if e.kind in (EntryKind.USER, EntryKind.ASSISTANT)]

    def calls(self) -> list[LogEntry]:
        return [e for e in self.entries if e.kind is EntryKind.TOOL_CALL]

    def result_of(self, call: str) -> LogEntry | None:
        return next(
            (e for e in self.entries if e.kind is EntryKind.TOOL_RESULT and e.ref == call), None
        )

    def excision_of(self, entry: LogEntry) -> LogEntry | None:
        return next(
            (
                e
                for e in self.entries
                if e.kind is EntryKind.EXCISION and entry.seq in e.body.get("excised", [])
            ),
            None,
        )

    def messages(self) -> list[Message]:
        """What search looks at: turns and tool results whose text still exists (H5)."""
        searchable = (EntryKind.USER, EntryKind.ASSISTANT, EntryKind.TOOL_RESULT)
        return [
            Message(str(e.ref), e.seq, text)
            for e in self.entries
            if e.kind in searchable and (text := self.texts.get(e.seq)) is not None
        ]


def load(store: Store, conversation: ConversationId) -> HistoryView:
    """Read a conversation's log and decrypt what is left of it."""
    require_conversation(store, conversation)
    with store.read() as conn:
        entries = conversation_log.entries(conn, conversation)
        texts = conversation_log.entry_texts(store, conn, conversation, [e.seq for e in entries])
    return HistoryView(entries, texts)


def pattern_search(pattern: str) -> Callable[[str], tuple[int, int] | None]:
    """A literal-or-regex search that gives up after PATTERN_TIMEOUT_S with a clear error."""
    try:
        compiled = regex.compile(pattern)
    except regex.error as error:
        raise InvalidInput(f"That pattern is not a valid regular expression ({error}).") from None

    def search(text: str) -> tuple[int, int] | None:
        try:
            found = compiled.search(text, timeout=PATTERN_TIMEOUT_S)
        except TimeoutError:
            raise InvalidInput(
                "That pattern takes too long to match (it backtracks without end); use a "
                "simpler pattern or literal text."
            ) from None
        return None if found is None else (found.start(), found.end())

    return search


def find(
    store: Store,
    conversation: ConversationId,
    query: str,
    mode: str = "relevance",
    limit: int | None = None,
) -> dict[str, Any]:
    """conversation_find: relevance (H1) or pattern (H2) mode."""
    if not query.strip():
        raise InvalidInput("Give some words or a pattern to look for.")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"The query may hold at most {MAX_QUERY_CHARS} characters.")
    messages = load(store, conversation).messages()
    result: FindResult
    if mode == "relevance":
        result = find_relevant(messages, query, limit)
    elif mode == "pattern":
        result = find_pattern(messages, query, limit, pattern_search(query))
    else:
        raise InvalidInput(f"{mode!r} is not a search mode; use relevance or pattern.")
    answer: dict[str, Any] = {
        "matches": [{"turn_id": m.turn, "excerpt": m.excerpt} for m in result.matches],
        "truncated": result.truncated,
    }
    if result.hint:
        answer["hint"] = result.hint
    return answer


def read_turn(store: Store, conversation: ConversationId, turn_id: str) -> dict[str, Any]:
    """conversation_read_turn: the turn's text, its middle cut when long (H3)."""
    view = load(store, conversation)
    entry = next((e for e in view.turns() if e.ref == turn_id), None)
    if entry is None:
        raise NotFound(f"There is no turn {turn_id!r} in this conversation.")
    text = view.texts.get(entry.seq)
    if text is None:
        return {"turn_id": turn_id, "text": None, "truncated": False, "removed": True}
    shown, truncated, cut = cut_middle(text, READ_TURN_CHARS)
    answer: dict[str, Any] = {
        "turn_id": turn_id,
        "role": entry.kind.value,
        "author": entry.author,
        "text": shown,
        "truncated": truncated,
    }
    if truncated:
        answer["characters_cut"] = cut
    return answer


def read_tool_result(store: Store, conversation: ConversationId, call_id: str) -> dict[str, Any]:
    """conversation_read_tool_result: the result, or a removal notice once excised (H4)."""
    view = load(store, conversation)
    entry = view.result_of(call_id)
    if entry is None:
        raise NotFound(f"There is no tool call {call_id!r} in this conversation.")
    excision = view.excision_of(entry)
    if excision is not None:
        return {
            "call_id": call_id,
            "removed": True,
            "notice": REMOVED,
            "removed_at": excision.at.isoformat(),
            "removed_by": excision.author,
        }
    text = view.texts.get(entry.seq)
    shown, truncated, _ = cut_middle(text or "", READ_TURN_CHARS)
    return {
        "call_id": call_id,
        "name": entry.body.get("name"),
        "result": shown,
        "truncated": truncated,
        "removed": False,
    }


def recent_turns(
    store: Store, conversation: ConversationId, limit: int | None = None
) -> dict[str, Any]:
    """conversation_recent_turns: the newest turns and their ids, oldest of them first."""
    view = load(store, conversation)
    count = clamp(limit)
    turns = view.turns()[-count:]
    return {
        "turns": [
            {
                "turn_id": e.ref,
                "role": e.kind.value,
                "author": e.author,
                "excerpt": cut_middle(view.texts.get(e.seq) or "", 300)[0],
            }
            for e in turns
        ]
    }


def list_tool_calls(store: Store, conversation: ConversationId) -> dict[str, Any]:
    """conversation_list_tool_calls: every recorded call, with whether its result remains."""
    view = load(store, conversation)
    calls = []
    for call in view.calls():
        result = view.result_of(str(call.ref))
        calls.append(
            {
                "call_id": call.ref,
                "name": call.body.get("name"),
                "removed": result is not None and view.excision_of(result) is not None,
            }
        )
    return {"calls": calls}


def _string(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise InvalidInput(f"The tool needs a text argument {key!r}.")
    return value


def _limit(args: Mapping[str, Any]) -> int | None:
    value = args.get("limit")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInput("'limit' must be a whole number.")
    return value


TOOLS: dict[str, Callable[[Store, ConversationId, Mapping[str, Any]], dict[str, Any]]] = {
    "conversation_find": lambda s, c, a: find(
        s, c, _string(a, "query"), str(a.get("mode") or "relevance"), _limit(a)
    ),
    "conversation_read_turn": lambda s, c, a: read_turn(s, c, _string(a, "turn_id")),
    "conversation_read_tool_result": lambda s, c, a: read_tool_result(s, c, _string(a, "call_id")),
    "conversation_recent_turns": lambda s, c, a: recent_turns(s, c, _limit(a)),
    "conversation_list_tool_calls": lambda s, c, a: list_tool_calls(s, c),
}


def dispatch(
    store: Store, conversation: ConversationId, name: str, arguments: Mapping[str, Any] | str
) -> dict[str, Any]:
    """Run one history tool for the host's conversation; errors come back as {"error": …}."""
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
        if not isinstance(args, dict):
            raise InvalidInput("Tool arguments must be a JSON object.")
        tool = TOOLS.get(name)
        if tool is None:
            raise NotFound(f"There is no history tool {name!r}.")
        kept = {k: v for k, v in args.items() if k not in IGNORED_ARGUMENTS}
        return tool(store, conversation, kept)
    except json.JSONDecodeError:
        return {"error": "Tool arguments must be a JSON object."}
    except EngramError as error:
        return {"error": str(error)}


def _fn(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


_LIMIT = {"type": "integer", "minimum": 1, "maximum": 25, "description": "5 by default"}
TOOL_DEFINITIONS: list[dict[str, Any]] = [
    _fn(
        "conversation_find",
        "Find earlier messages in this conversation. relevance: ranked by how many of your "
        "words a message contains; pattern: literal text or a regular expression, newest "
        "first.",
        {
            "query": {"type": "string"},
            "mode": {"type": "string", "enum": ["relevance", "pattern"]},
            "limit": _LIMIT,
        },
        ["query"],
    ),
    _fn(
        "conversation_read_turn",
        "Read one earlier turn of this conversation in full.",
        {"turn_id": {"type": "string"}},
        ["turn_id"],
    ),
    _fn(
        "conversation_read_tool_result",
        "Read a recorded tool result by its call id.",
        {"call_id": {"type": "string"}},
        ["call_id"],
    ),
    _fn(
        "conversation_recent_turns",
        "The most recent turns of this conversation and their ids.",
        {"limit": _LIMIT},
        [],
    ),
    _fn("conversation_list_tool_calls", "The tool calls recorded in this conversation.", {}, []),
]
