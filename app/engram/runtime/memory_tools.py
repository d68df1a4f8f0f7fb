"""The typed memory tools an agent may be given (P2, P3, W6, W7).

- `memory_search`: the notes this conversation's audience may receive (S1-S3) that share
  words with the query, best match first (BM25, issue 18 item 14); each use is recorded
  like assembly's.
- `memory_remember` and `memory_update_item`: never written directly. They become pending
  candidates a person must approve (W6), attributed to the host's person and conversation.
- `memory_forget`: takes one of those visible notes out of active retrieval; the record
  stays (C2).

A tool is offered only when the agent's configuration enables it *and* the host's tool
policy allows it (P2). The person and conversation always come from the host's
attribution, never from the arguments (P3, W6). Incognito conversations write nothing
(W7).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from engram.engine import bm25
from engram.engine.assembly import TextNote
from engram.engine.extraction import MAX_PROPOSAL_CHARS
from engram.engine.history_search import clamp
from engram.engine.merge import expired
from engram.engine.recall import RecallResult
from engram.engine.words import terms
from engram.model.agents import AgentConfig
from engram.model.errors import InvalidInput, NotFound
from engram.model.event_bodies import Deleted
from engram.model.events import Cause, EventType, NewEvent
from engram.model.ids import ConversationId, NoteId, PersonId
from engram.model.notes import Note
from engram.model.scope import Audience, Kind, Scope, parse_enum
from engram.runtime.agents import agent_config
from engram.runtime.context import (
    Attribution,
    audience_for_turn,
    journal_now,
    recall_turn,
    record_use,
)
from engram.runtime.conversations import require_conversation
from engram.runtime.note_writes import (
    NoteDraft,
    reopened_after,
    suggestion,
    writable_conversation,
)
from engram.runtime.search_pool import search_pool
from engram.runtime.sensitive_lexicon import sensitive_category
from engram.runtime.tool_calls import (
    LIMIT_SCHEMA,
    ToolSpec,
    answer_object,
    limit_arg,
    run_tool,
    text_arg,
)
from engram.runtime.usage_writer import UsageNotKept, UsageRecorder
from engram.store import journal, projection_notes
from engram.store.store import Store

_KINDS = sorted(k.value for k in Kind)

_TEXT = {"type": "string"}
_PROPOSED = answer_object(
    {"candidate": _TEXT, "status": {"const": "pending"}, "message": _TEXT},
    ["candidate", "status", "message"],
)
SPECS: dict[str, ToolSpec] = {
    "memory_search": ToolSpec(
        "memory_search",
        "Search memory",
        "Look up what is remembered about the person you are talking with, by words.",
        {"query": _TEXT, "limit": LIMIT_SCHEMA},
        ["query"],
        answer_object(
            {
                "items": {
                    "type": "array",
                    "items": answer_object(
                        {"item_id": _TEXT, "kind": {"enum": _KINDS}, "text": _TEXT},
                        ["item_id", "kind", "text"],
                    ),
                },
                "error": _TEXT,
            },
            ["items"],
        ),
        read_only=True,
        idempotent=True,
    ),
    "memory_remember": ToolSpec(
        "memory_remember",
        "Ask to remember",
        "Ask to remember something the person said about themself. A person reviews it "
        "before it is kept.",
        {"text": _TEXT, "kind": {"type": "string", "enum": _KINDS}},
        ["text", "kind"],
        _PROPOSED,
        read_only=False,
    ),
    "memory_update_item": ToolSpec(
        "memory_update_item",
        "Ask to correct a remembered item",
        "Ask to correct a remembered item (by its id from memory_search). A person reviews "
        "the correction before it replaces the item.",
        {"item_id": _TEXT, "text": _TEXT},
        ["item_id", "text"],
        _PROPOSED,
        read_only=False,
    ),
    "memory_forget": ToolSpec(
        "memory_forget",
        "Forget a remembered item",
        "Stop using a remembered item (by its id from memory_search).",
        {"item_id": _TEXT},
        ["item_id"],
        answer_object({"item_id": _TEXT, "forgotten": {"type": "boolean"}}, ["item_id"]),
        read_only=False,
        destructive=True,
        idempotent=True,
    ),
}
DEFINITIONS: dict[str, dict[str, Any]] = {name: spec.openai() for name, spec in SPECS.items()}


def tool_specs(config: AgentConfig, host_allows: Collection[str]) -> list[ToolSpec]:
    """The tools to offer: enabled here and allowed by the host (P2)."""
    return [SPECS[name] for name in config.exposed_tools(host_allows)]


WRITING_TOOL = "memory_remember"  # the one tool that brings a new note in (W6)


def writing_tool(config: AgentConfig, host_allows: Collection[str]) -> str | None:
    """The tool this agent may write new notes with, or None (R2 names it, or none)."""
    return WRITING_TOOL if WRITING_TOOL in config.exposed_tools(host_allows) else None


def conversation_agent(store: Store, conversation: ConversationId) -> AgentConfig:
    """The configuration of the agent a conversation runs with."""
    return agent_config(store, require_conversation(store, conversation).agent)


def recall_for_turn(
    store: Store,
    attribution: Attribution,
    config: AgentConfig,
    host_allows: Collection[str] = SPECS,
    *,
    limit: int | None = None,
    record_usage: bool = False,
    usage: UsageRecorder | None = None,
) -> RecallResult:
    """memory_recall on every face (R1, R2): one function builds its answers, so the empty
    one names the writing tool this agent really has here on each (issue 18 item 8).
    `host_allows`: the tools the host lets through (every tool unless it narrows them);
    `usage` takes the usage record (a server's background writer; see record_use)."""
    return recall_turn(
        store,
        attribution,
        limit=limit,
        record_usage=record_usage,
        writer=writing_tool(config, host_allows),
        usage=usage,
    )


NOT_READ_NOW = "memory could not be read just now; go on without it"


def tool_definitions(config: AgentConfig, host_allows: Collection[str]) -> list[dict[str, Any]]:
    """The definitions to give the model: enabled here and allowed by the host (P2)."""
    return [DEFINITIONS[name] for name in config.exposed_tools(host_allows)]


def dispatch(
    store: Store,
    attribution: Attribution,
    config: AgentConfig,
    host_allows: Collection[str],
    name: str,
    arguments: Mapping[str, Any] | str,
    usage: UsageRecorder | None = None,
) -> dict[str, Any]:
    """Run one memory tool for the host's person and conversation; errors as {"error": …}.
    `usage` takes memory_search's usage record (see record_use)."""
    if name not in config.exposed_tools(host_allows):
        return {"error": f"The tool {name!r} is not available to this agent."}
    actor = f"agent:{config.name}"

    def call(args: dict[str, Any]) -> dict[str, Any]:
        if name == "memory_search":
            return search(store, attribution, text_arg(args, "query"), limit_arg(args), usage)
        if name == "memory_remember":
            kind = config.require_writable(parse_enum(Kind, text_arg(args, "kind"), "kind"))
            return propose(store, attribution, text_arg(args, "text"), kind, None, actor)
        if name == "memory_update_item":
            item = _visible(store, attribution, text_arg(args, "item_id"))
            config.require_writable(item.kind)
            text = text_arg(args, "text")
            return propose(store, attribution, text, item.kind, item.id, actor)
        return forget(store, attribution, text_arg(args, "item_id"), actor)

    return run_tool(arguments, call, SPECS[name])


def search(
    store: Store,
    attribution: Attribution,
    query: str,
    limit: int | None,
    usage: UsageRecorder | None = None,
) -> dict[str, Any]:
    """memory_search: what this conversation's audience may see, sharing words with the
    query; each item returned is recorded as used. An answer whose use cannot be recorded
    hands out no items (A9)."""
    audience = audience_for_turn(store, attribution)
    answer = find_items(store, attribution.person, audience, query, limit)
    used = [i["item_id"] for i in answer["items"]]
    cause = Cause(attribution.conversation, attribution.turn)
    try:
        record_use(store, attribution.person, used, "search", cause, usage=usage)
    except UsageNotKept:  # nothing unaudited is handed out
        return {"items": [], "error": NOT_READ_NOW}
    return answer


def find_items(
    store: Store, person: PersonId, audience: Audience, query: str, limit: int | None
) -> dict[str, Any]:
    """Notes `audience` may receive (S1-S3) sharing words with the query: best match
    first (BM25), then ranking; 5 by default, 25 at most."""
    found = matching_notes(store, person, audience, query)
    if found is None:
        return {"items": [], "error": NOT_READ_NOW}
    return {
        "items": [
            {"item_id": item.note.id, "kind": item.note.kind.value, "text": item.text}
            for _, item in found[: clamp(limit)]
        ]
    }


def matching_notes(
    store: Store, person: PersonId, audience: Audience, query: str | None
) -> list[tuple[float, TextNote]] | None:
    """Every note `audience` may receive (S1-S3) that shares words with the query, with its
    BM25 score, best first, then in ranking order (no seed rule binds this search, so it
    ranks by the best lexical measure we have: issue 18 item 14); with no query, all of
    them in ranking order (score 0). Only the best-ranked notes are looked through
    (search_pool). None when memory could not be read (R2: never an empty answer)."""
    wanted = None if query is None else terms(query)
    if wanted is not None and not wanted:
        raise InvalidInput("Give some words to look for.")
    pool = search_pool(store, person, audience)
    if pool is None:
        return None
    if wanted is None:
        return [(0.0, n.item) for n in pool]
    ranked = bm25.rank_sets(wanted, [n.words for n in pool])
    return [(score, pool[rank].item) for rank, score in ranked]


def propose(
    store: Store,
    attribution: Attribution,
    text: str,
    kind: Kind,
    replaces: NoteId | None,
    actor: str,
) -> dict[str, Any]:
    """W6: a pending candidate from an agent's tool call, for a person to approve."""
    cleaned = " ".join(text.split())
    if not cleaned or len(cleaned) > MAX_PROPOSAL_CHARS:
        raise InvalidInput(f"The text must hold 1 to {MAX_PROPOSAL_CHARS} characters.")
    cause = Cause(attribution.conversation, attribution.turn)
    detected = sensitive_category(cleaned)  # P5
    candidate, event = suggestion(
        NoteDraft(cleaned, kind, Scope.UNSPECIFIED),
        actor,
        actor,
        cause,
        sensitive=detected is not None,
        category=detected.value if detected else None,
        ambiguous=False,
        contradicts=replaces,
    )
    with store.write() as txn:
        writable_conversation(txn, attribution.person, attribution.conversation)  # W4, W7
        journal.append(store, txn, attribution.person, [event])
    return {
        "candidate": candidate,
        "status": "pending",
        "message": "Saved for review: a person approves it before it is remembered.",
    }


def forget(store: Store, attribution: Attribution, item_id: str, actor: str) -> dict[str, Any]:
    """Close a visible note's interval at the agent's request; its record stays (C2). The
    note is looked up again inside the write, so it is still visible and still open."""
    audience = audience_for_turn(store, attribution)
    with store.write() as txn:
        journal.lock(txn, attribution.person)
        note = projection_notes.eligible_note(txn.conn, audience, NoteId(item_id))
        if note is None:
            raise NotFound(f"There is no item {item_id!r} here.")
        cause = Cause(attribution.conversation, attribution.turn)
        event = NewEvent(
            EventType.DELETED, actor, Deleted(note.id), cause, "forgotten at the agent's request"
        )
        reopen = reopened_after(txn.conn, attribution.person, [note.id], actor, cause)
        journal.append(store, txn, attribution.person, [event, *reopen])
    return {"item_id": note.id, "forgotten": True}


def _visible(store: Store, attribution: Attribution, item_id: str) -> Note:
    """An active note this conversation's audience may see; anything else is unknown."""
    audience = audience_for_turn(store, attribution)
    with store.read() as conn:
        note = projection_notes.eligible_note(conn, audience, NoteId(item_id))
        if note is not None and expired(note, journal_now(store, conn, attribution.person)):
            note = None  # M3: past its four hours, whether or not maintain has run
    if note is None:
        raise NotFound(f"There is no item {item_id!r} here.")
    return note
