"""The answers of Engram's HTTP API as the client returns them (pydantic).

Defined here rather than imported from engram.api, whose models stand on the runtime and
the store: a client needs only httpx and pydantic. Every answer accepts fields it does not
name, so a newer server never breaks an older client; values the server may extend (kinds,
scopes, statuses) are plain strings for the same reason.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Answer(BaseModel):
    """An answer body; later server versions may add fields."""

    model_config = ConfigDict(extra="allow", frozen=True)


# ---- conversations -----------------------------------------------------------------------


class Conversation(Answer):
    """A conversation the person takes part in; `audience` is who can read it (S3)."""

    id: str
    created_at: str
    surface: str
    incognito: bool
    agent: str | None
    participants: list[str]
    audience: str


class LogEntry(Answer):
    """One entry of the conversation's signed log; `text` is None where it was removed."""

    seq: int
    kind: str
    id: str | None
    author: str | None
    status: str | None
    at: str
    text: str | None
    name: str | None = None


class Transcript(Conversation):
    """The conversation and one page of its log; pass `next_after` as `after` for more."""

    entries: list[LogEntry]
    next_after: int | None


class Turn(Answer):
    """A turn as recorded; a retry with the same idempotency key gets the same answer.
    `learning` is "queued", or says why nothing is learned from it now."""

    turn_id: str
    conversation: str
    role: str
    author: str
    status: str
    at: str
    learning: str


class ToolCall(Answer):
    """A tool call as recorded."""

    call_id: str
    conversation: str
    name: str
    status: str
    at: str


# ---- the history tools -------------------------------------------------------------------


class Match(Answer):
    """A message that matched: a turn (read it by turn_id) or a tool result (by call_id)."""

    kind: str
    turn_id: str | None = None
    call_id: str | None = None
    excerpt: str


class Found(Answer):
    """conversation_find's answer (H1, H2)."""

    matches: list[Match]
    truncated: bool
    hint: str | None = None


class TurnText(Answer):
    """conversation_read_turn: the turn, its middle cut when long (H3)."""

    turn_id: str
    role: str | None = None
    author: str | None = None
    text: str | None
    truncated: bool
    characters_cut: int | None = None
    removed: bool | None = None


class ToolResult(Answer):
    """conversation_read_tool_result: the result, or a removal notice (H4)."""

    call_id: str
    removed: bool
    name: str | None = None
    result: str | None = None
    truncated: bool | None = None
    notice: str | None = None


class RecentTurn(Answer):
    """A recent turn, by id, with the start of its text."""

    turn_id: str
    role: str
    author: str | None
    excerpt: str


class RecentTurns(Answer):
    """conversation_recent_turns: the newest turns, oldest of them first."""

    turns: list[RecentTurn]


class ToolCallEntry(Answer):
    """A recorded tool call, and whether its result was removed."""

    call_id: str
    name: str | None
    removed: bool


class ToolCalls(Answer):
    """conversation_list_tool_calls."""

    calls: list[ToolCallEntry]


# ---- turn context ------------------------------------------------------------------------


class PlacedNote(Answer):
    """A note that went into the block, at its rank in its section."""

    id: str
    rank: int
    section: str


class DroppedPart(Answer):
    """Something left out of the block, and why."""

    what: str
    reason: str
    note: str | None


class Assembled(Answer):
    """The system block a turn in the conversation gets (A1-A9): give `block` to the model
    as context, never store it in the transcript."""

    block: str
    notes: list[PlacedNote]
    dropped: list[DroppedPart]
    used: int
    budget: int
    notes_readable: bool


class RecalledNote(Answer):
    """A note recall returned."""

    id: str
    kind: str
    scope: str
    confidence_bp: int
    text: str


class Recalled(Answer):
    """What memory_recall gives the agent: `status` tells an empty memory from a restricted
    audience or an unreadable store (R2); `message` says it in words."""

    status: str
    message: str | None
    notes: list[RecalledNote]
    digest: list[str]


# ---- items and candidates ----------------------------------------------------------------


class Source(Answer):
    """Where a note was learned."""

    conversation: str | None = None
    turn: str | None = None
    at: str | None = None


class Item(Answer):
    """A note in the CLI contract's JSON shape."""

    id: str
    person: str
    kind: str
    scope: str
    durability: str
    text: str | None
    confidence_bp: int
    valid_from: str | None
    valid_to: str | None
    status: str
    sources: list[Source]
    corroborators: list[str]


class UsageEntry(Answer):
    """One time the note went into a turn's context or a tool's answer."""

    at: str
    via: str
    rank: int
    conversation: str | None = None
    turn: str | None = None


class ItemDetail(Item):
    """A note with its versions, confidence arithmetic, usage and history."""

    versions: list[Item]
    confidence: dict[str, Any]
    usage: list[UsageEntry]
    history: list[dict[str, Any]]


class ItemPage(Answer):
    """One page of notes in creation order; pass `next_cursor` for the next."""

    items: list[Item]
    total: int
    next_cursor: str | None


class FoundItem(Answer):
    """A note that shares words with the query."""

    item_id: str
    kind: str
    text: str


class SearchResult(Answer):
    """The best matches first; `error` says when memory could not be read."""

    items: list[FoundItem]
    error: str | None = None


class DeletedItem(Answer):
    """The note's interval was closed; its record stays (C2)."""

    item_id: str
    deleted: bool


class Candidate(Answer):
    """A suggested note waiting for (or after) review; decide on its `revision`."""

    id: str
    revision: int
    status: str
    kind: str
    scope: str
    text: str | None
    applied_note: str | None = None


class CascadeItem(Item):
    """A note a conversation's deletion touches, and why it closes, survives or reopens."""

    reason: str


class RejectedCandidate(Answer):
    """A pending suggestion from the deleted conversation, rejected with the reason."""

    id: str
    text: str | None
    reason: str


class Deletion(Answer):
    """What deleting the conversation closes, keeps and reopens for the person; `deleted`
    is False in a preview. A shared conversation is deleted for the person only: `kept_by`
    names who keeps it (the defaults are what a server before issue 18 item 5 meant)."""

    conversation: str
    person: str
    deleted: bool
    closes: list[CascadeItem]
    survives: list[CascadeItem]
    reopens: list[CascadeItem]
    other_participants_notes_closing: int
    for_everyone: bool = True
    shreds: list[CascadeItem] = []
    candidates_rejected: list[RejectedCandidate] = []
    kept_by: list[str] = []
