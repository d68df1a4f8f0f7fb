"""The five conversation-history tools (H1-H6), bound to the turn's conversation.

The host supplies the attribution; no tool takes a conversation or person argument, and
any scope or target fields the model sends are ignored (H6). Unknown ids are errors in the
answer, never exceptions in the host.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from engram.engine.history_search import (
    FindResult,
    Message,
    MessageIndex,
    clamp,
    cut_middle,
)
from engram.model.conversation import SEARCHABLE_KINDS, ConversationInfo, EntryKind, LogEntry
from engram.model.errors import InvalidInput, NotFound
from engram.model.ids import ConversationId
from engram.runtime import pattern_search, search_language
from engram.runtime.conversations import no_such_conversation
from engram.runtime.tool_calls import (
    LIMIT_SCHEMA,
    ToolSpec,
    answer_object,
    limit_arg,
    run_tool,
    text_arg,
)
from engram.store import conversation_log
from engram.store.store import Store

READ_TURN_CHARS = 4_000
PATTERN_BUDGET_S = 1.0  # for one search through a whole conversation
MAX_QUERY_CHARS = 500
REMOVED = "this tool result was removed by an administrator; its content is not available"


_TURNS = (EntryKind.USER, EntryKind.ASSISTANT)
TURN, TOOL_RESULT = "turn", "tool_result"  # what a conversation_find match is (H1)
CACHED_LOGS = 8  # decrypted logs kept per open store, least recently used dropped first


@dataclass(eq=False)
class HistoryView:
    """One conversation's log with its texts and search index, as the tools read it.

    It is built once and then caught up with only the entries appended since, so a tool
    call neither decrypts the whole log again nor re-tokenises it. Excisions logged after
    it was built drop the excised texts from it and from its index (H5). Its index stems in
    the conversation's language, looked up again whenever a participant's journal moves on.
    """

    entries: list[LogEntry] = field(default_factory=list)
    texts: dict[int, str | None] = field(default_factory=dict)
    index: MessageIndex = field(default_factory=MessageIndex)
    last_seq: int = 0
    last_hash: bytes | None = None
    info: ConversationInfo | None = None
    language_key: tuple[int, ...] | None = None
    _turns: dict[str, LogEntry] = field(default_factory=dict)
    _results: dict[str, LogEntry] = field(default_factory=dict)
    _excised_by: dict[int, LogEntry] = field(default_factory=dict)

    def catch_up(self, entries: list[LogEntry], texts: Mapping[int, str | None]) -> None:
        """Take in entries appended after `last_seq`, with their decrypted texts."""
        for entry in entries:
            text = texts.get(entry.seq)
            self.entries.append(entry)
            self.texts[entry.seq] = text
            self.last_seq, self.last_hash = entry.seq, entry.entry_hash
            if entry.kind is EntryKind.EXCISION:
                for seq in entry.body.get("excised", []):
                    self.texts[seq] = None
                    self.index.remove(seq)
                    self._excised_by.setdefault(seq, entry)  # the first removal says when
            if entry.ref is None:
                continue
            if entry.kind in _TURNS:
                self._turns.setdefault(entry.ref, entry)
            elif entry.kind is EntryKind.TOOL_RESULT:
                self._results.setdefault(entry.ref, entry)
            if entry.kind in SEARCHABLE_KINDS and text is not None:
                self.index.add(Message(entry.ref, entry.seq, text))

    def turns(self) -> list[LogEntry]:
        return list(self._turns.values())

    def turn(self, turn_id: str) -> LogEntry | None:
        return self._turns.get(turn_id)

    def calls(self) -> list[LogEntry]:
        return [e for e in self.entries if e.kind is EntryKind.TOOL_CALL]

    def result_of(self, call: str) -> LogEntry | None:
        return self._results.get(call)

    def kind_of(self, ref: str) -> str:
        """Whether a searchable message is a turn or a tool result (by its id)."""
        return TOOL_RESULT if ref in self._results else TURN

    def excision_of(self, entry: LogEntry) -> LogEntry | None:
        return self._excised_by.get(entry.seq)

    def messages(self) -> list[Message]:
        """What search looks at: turns and tool results whose text still exists (H5)."""
        return self.index.messages()


@dataclass(eq=False)
class _Logs:
    """The decrypted logs one open store keeps for the history tools."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    views: OrderedDict[ConversationId, HistoryView] = field(default_factory=OrderedDict)


@contextlib.contextmanager
def viewing(store: Store, conversation: ConversationId) -> Iterator[HistoryView]:
    """A conversation's log, caught up with the store, held still while the caller reads.

    Decrypted logs live in the store's plaintext caches, so closing (locking) the store or
    any erasure drops them; at most CACHED_LOGS are kept.
    """
    logs: _Logs | None = store.plaintext_caches.get("history")
    if logs is None:
        logs = store.plaintext_caches.setdefault("history", _Logs())
    with logs.lock:
        view = logs.views.pop(conversation, None) or HistoryView()
        with store.read() as conn:
            head = conversation_log.log_head(conn, conversation, view.last_seq)
            if head is None:
                raise no_such_conversation(conversation)
            last, hash_now = head
            if hash_now != view.last_hash:
                # The log under the held copy changed (an older copy of the store was put
                # back): start again from the log as it is.
                view = HistoryView()
            _keep_language(store, conn, conversation, view)
            if last > view.last_seq:
                new = conversation_log.entries(conn, conversation, after=view.last_seq)
                seqs = [e.seq for e in new]
                view.catch_up(new, conversation_log.entry_texts(store, conn, conversation, seqs))
        logs.views[conversation] = view
        while len(logs.views) > CACHED_LOGS:
            logs.views.popitem(last=False)
        yield view


def _keep_language(
    store: Store, conn: Any, conversation: ConversationId, view: HistoryView
) -> None:
    """Re-index the view in its conversation's language if that may have changed (H1)."""
    if view.info is None:
        view.info = conversation_log.get(conn, conversation)
        if view.info is None:
            raise no_such_conversation(conversation)
    key = search_language.language_key(conn, view.info.participants)
    if key != view.language_key:
        view.language_key = key
        language = search_language.conversation_language(store, conn, view.info)
        view.index = view.index.in_language(language)


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
    if mode not in ("relevance", "pattern"):
        raise InvalidInput(f"{mode!r} is not a search mode; use relevance or pattern.")
    result: FindResult
    with viewing(store, conversation) as view:
        if mode == "relevance":
            result = view.index.find_relevant(query, limit)
        else:
            result = pattern_search.find(view.messages(), query, limit, PATTERN_BUDGET_S)
        matches = [match_json(view.kind_of(m.turn), m.turn, m.excerpt) for m in result.matches]
    answer: dict[str, Any] = {"matches": matches, "truncated": result.truncated}
    if result.hint:
        answer["hint"] = result.hint
    return answer


def match_json(kind: str, ref: str, excerpt: str) -> dict[str, Any]:
    """One match as conversation_find returns it (H1, H3): its kind, and the id the matching
    read tool accepts — `turn_id` for conversation_read_turn, `call_id` for
    conversation_read_tool_result."""
    key = "call_id" if kind == TOOL_RESULT else "turn_id"
    return {"kind": kind, key: ref, "excerpt": excerpt}


def read_turn(store: Store, conversation: ConversationId, turn_id: str) -> dict[str, Any]:
    """conversation_read_turn: the turn's text, its middle cut when long (H3)."""
    with viewing(store, conversation) as view:
        entry = view.turn(turn_id)
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
    with viewing(store, conversation) as view:
        entry = view.result_of(call_id)
        if entry is None:
            raise NotFound(f"There is no tool call {call_id!r} in this conversation.")
        excision = view.excision_of(entry)
        text = view.texts.get(entry.seq)
    if excision is not None:
        return {
            "call_id": call_id,
            "removed": True,
            "notice": REMOVED,
            "removed_at": excision.at.isoformat(),
            "removed_by": excision.author,
        }
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
    count = clamp(limit)
    with viewing(store, conversation) as view:
        return {
            "turns": [
                {
                    "turn_id": e.ref,
                    "role": e.kind.value,
                    "author": e.author,
                    "excerpt": cut_middle(view.texts.get(e.seq) or "", 300)[0],
                }
                for e in view.turns()[-count:]
            ]
        }


def list_tool_calls(store: Store, conversation: ConversationId) -> dict[str, Any]:
    """conversation_list_tool_calls: every recorded call, with whether its result remains."""
    calls = []
    with viewing(store, conversation) as view:
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


TOOLS: dict[str, Callable[[Store, ConversationId, Mapping[str, Any]], dict[str, Any]]] = {
    "conversation_find": lambda s, c, a: find(
        s, c, text_arg(a, "query"), str(a.get("mode") or "relevance"), limit_arg(a)
    ),
    "conversation_read_turn": lambda s, c, a: read_turn(s, c, text_arg(a, "turn_id")),
    "conversation_read_tool_result": lambda s, c, a: read_tool_result(s, c, text_arg(a, "call_id")),
    "conversation_recent_turns": lambda s, c, a: recent_turns(s, c, limit_arg(a)),
    "conversation_list_tool_calls": lambda s, c, a: list_tool_calls(s, c),
}


def dispatch(
    store: Store, conversation: ConversationId, name: str, arguments: Mapping[str, Any] | str
) -> dict[str, Any]:
    """Run one history tool for the host's conversation; errors come back as {"error": …}."""
    tool, spec = TOOLS.get(name), SPECS.get(name)
    if tool is None or spec is None:
        return {"error": f"There is no history tool {name!r}."}
    return run_tool(arguments, lambda args: tool(store, conversation, args), spec)


_TEXT = {"type": "string"}
_MAYBE_TEXT = {"type": ["string", "null"]}
_FLAG = {"type": "boolean"}
TOOL_SPECS: list[ToolSpec] = [
    ToolSpec(
        "conversation_find",
        "Find in this conversation",
        "Find earlier messages in this conversation. relevance: ranked by how many of your "
        "words a message contains; pattern: messages that contain the query as literal text "
        "or match it as a regular expression (RE2 syntax: case-sensitive unless it starts "
        "with (?i); no backreferences or lookaround), newest first. Each match is a turn "
        "(read it with conversation_read_turn and its turn_id) or a tool result "
        "(conversation_read_tool_result and its call_id).",
        {
            "query": _TEXT,
            "mode": {"type": "string", "enum": ["relevance", "pattern"]},
            "limit": LIMIT_SCHEMA,
        },
        ["query"],
        answer_object(
            {
                "matches": {
                    "type": "array",
                    "items": {
                        **answer_object(
                            {
                                "kind": {"enum": [TURN, TOOL_RESULT]},
                                "turn_id": _TEXT,
                                "call_id": _TEXT,
                                "excerpt": _TEXT,
                            },
                            ["kind", "excerpt"],
                        ),
                        # H1, H3: the id its read tool accepts
                        "oneOf": [
                            {"properties": {"kind": {"const": TURN}}, "required": ["turn_id"]},
                            {
                                "properties": {"kind": {"const": TOOL_RESULT}},
                                "required": ["call_id"],
                            },
                        ],
                    },
                },
                "truncated": _FLAG,
                "hint": _TEXT,
            },
            ["matches", "truncated"],
        ),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "conversation_read_turn",
        "Read a turn",
        "Read one earlier turn of this conversation in full.",
        {"turn_id": _TEXT},
        ["turn_id"],
        answer_object(
            {
                "turn_id": _TEXT,
                "role": _TEXT,
                "author": _MAYBE_TEXT,
                "text": _MAYBE_TEXT,
                "truncated": _FLAG,
                "removed": _FLAG,
                "characters_cut": {"type": "integer"},
            },
            ["turn_id", "text", "truncated"],
        ),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "conversation_read_tool_result",
        "Read a tool result",
        "Read a recorded tool result by its call id.",
        {"call_id": _TEXT},
        ["call_id"],
        answer_object(
            {
                "call_id": _TEXT,
                "name": _MAYBE_TEXT,
                "result": _TEXT,
                "truncated": _FLAG,
                "removed": _FLAG,
                "notice": _TEXT,
                "removed_at": _TEXT,
                "removed_by": _MAYBE_TEXT,
            },
            ["call_id", "removed"],
        ),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "conversation_recent_turns",
        "Recent turns",
        "The most recent turns of this conversation and their ids.",
        {"limit": LIMIT_SCHEMA},
        [],
        answer_object(
            {
                "turns": {
                    "type": "array",
                    "items": answer_object(
                        {"turn_id": _TEXT, "role": _TEXT, "author": _MAYBE_TEXT, "excerpt": _TEXT},
                        ["turn_id", "role", "excerpt"],
                    ),
                }
            },
            ["turns"],
        ),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "conversation_list_tool_calls",
        "List tool calls",
        "The tool calls recorded in this conversation.",
        {},
        [],
        answer_object(
            {
                "calls": {
                    "type": "array",
                    "items": answer_object(
                        {"call_id": _TEXT, "name": _MAYBE_TEXT, "removed": _FLAG},
                        ["call_id", "removed"],
                    ),
                }
            },
            ["calls"],
        ),
        read_only=True,
        idempotent=True,
    ),
]
SPECS = {spec.name: spec for spec in TOOL_SPECS}
TOOL_DEFINITIONS: list[dict[str, Any]] = [spec.openai() for spec in TOOL_SPECS]
