"""Request and response bodies of the conversation routes (pydantic; see models.py for the
conventions: requests name every field, answers may grow)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, JsonValue, StrictBool, StrictInt, StrictStr, model_validator

from engram.api.models import Answer, Body, Item
from engram.model.conversation import Surface
from engram.runtime.conversations import MAX_TURN_CHARS
from engram.runtime.history import MAX_QUERY_CHARS
from engram.runtime.tool_calls import IGNORED_ARGUMENTS

MAX_OTHERS = 50

# ---- requests ----------------------------------------------------------------------------


class NewConversation(Body):
    """A conversation between the person in the trusted header, the agent in the path and
    any other people named here (everyone who can read it, S3)."""

    participants: list[StrictStr] = Field(
        default_factory=list,
        max_length=MAX_OTHERS,
        description="Other people taking part, by id; the header's person always does.",
    )
    surface: Surface = Surface.CHAT
    incognito: StrictBool = Field(
        default=False, description="Turns are kept, but nothing is ever learned from them."
    )


class NewTurn(Body):
    """A turn: a user turn is the header's person speaking; an assistant turn is the agent's
    reply. Only committed turns are learned from (P4)."""

    role: Literal["user", "assistant"]
    text: StrictStr = Field(max_length=MAX_TURN_CHARS)
    status: Literal["committed", "failed", "cancelled"] = "committed"


class NewToolCall(Body):
    """A tool the agent called in this conversation, and what it returned."""

    name: StrictStr = Field(min_length=1, max_length=200)
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    result: StrictStr = Field(max_length=MAX_TURN_CHARS)
    status: Literal["ok", "error"] = "ok"


class ToolArguments(Body):
    """A history tool's arguments, as the model sent them: the conversation, person or
    scope it may add are dropped, never obeyed (H6)."""

    @model_validator(mode="before")
    @classmethod
    def _drop_reaching_arguments(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in IGNORED_ARGUMENTS}
        return data


class FindRequest(ToolArguments):
    """conversation_find: words (relevance) or literal text / an RE2 pattern (pattern)."""

    query: StrictStr = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    mode: Literal["relevance", "pattern"] = "relevance"
    limit: StrictInt | None = Field(default=None, ge=1, le=25)


# ---- responses ---------------------------------------------------------------------------


class Conversation(Answer):
    """A conversation the person takes part in; `audience` is who can read it (S3)."""

    id: str
    created_at: str
    surface: Surface
    incognito: bool
    agent: str | None
    participants: list[str]
    audience: str


class ConversationList(BaseModel):
    """The person's conversations with this agent, oldest first."""

    conversations: list[Conversation]


class LogEntry(Answer):
    """One entry of the conversation's signed log; `text` is null where it was removed."""

    seq: int
    kind: Literal["user", "assistant", "tool_call", "tool_result", "excision"]
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


class TurnAnswer(Answer):
    """The turn as recorded; a retry with the same Idempotency-Key gets the same answer.
    `learning` is "queued", or says why nothing is learned from it now."""

    turn_id: str
    conversation: str
    role: Literal["user", "assistant"]
    author: str
    status: str
    at: str
    learning: str


class ToolCallAnswer(Answer):
    """The tool call as recorded."""

    call_id: str
    conversation: str
    name: str
    status: str
    at: str


class CascadeItem(Item):
    """A note the deletion touches, and why it closes, survives or reopens (C4)."""

    reason: str


class RejectedCandidate(Answer):
    """A pending suggestion from the conversation, rejected with the reason."""

    id: str
    text: str | None
    reason: str


class PersonCascade(Answer):
    """One affected person's part of a deletion."""

    person: str
    closes: list[CascadeItem]
    survives: list[CascadeItem]
    reopens: list[CascadeItem]
    shreds: list[CascadeItem]
    candidates_rejected: list[RejectedCandidate]


class DeletionAnswer(Answer):
    """What deleting the conversation closes, keeps and reopens for the person, which
    closed notes lose their words and which suggestions are rejected; `deleted` is false in
    a preview, `kept_by` names who keeps a shared conversation. `verdict` (for_themself or
    for_everyone), `sentence` and `sentences` are the preview in words, made by the engine's
    control layer and printed alike by the window and the CLI (C4, issue 18 item 9)."""

    conversation: str
    person: str
    deleted: bool
    for_everyone: bool
    closes: list[CascadeItem]
    survives: list[CascadeItem]
    reopens: list[CascadeItem]
    shreds: list[CascadeItem]
    candidates_rejected: list[RejectedCandidate]
    other_participants_notes_closing: int
    people: list[PersonCascade]
    kept_by: list[str]
    verdict: str
    sentence: str
    sentences: list[str]
    report: dict[str, Any] | None = None


class Match(Answer):
    """A message that matched: a turn (read it by turn_id) or a tool result (by call_id)."""

    kind: Literal["turn", "tool_result"]
    turn_id: str | None = None
    call_id: str | None = None
    excerpt: str


class FindAnswer(Answer):
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
    removed_at: str | None = None
    removed_by: str | None = None


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


class ToolCallList(Answer):
    """conversation_list_tool_calls."""

    calls: list[ToolCallEntry]
