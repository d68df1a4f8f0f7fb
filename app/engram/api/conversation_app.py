"""The conversation routes on the FastAPI application (operations in
conversation_routes.py): starting conversations, appending turns and tool calls with an
Idempotency-Key, reading and deleting them, and the five history tools.

No `from __future__ import annotations` here: FastAPI reads these routes' annotations,
which name dependencies built inside `build_app`.
"""

from collections.abc import Awaitable, Callable
from enum import Enum
from typing import Annotated, Any

from fastapi import FastAPI, Header, Path, Query, Response

from engram.api import conversation_models as cm
from engram.api.conversation_routes import MAX_TRANSCRIPT_PAGE, TRANSCRIPT_PAGE, ConversationApi
from engram.api.models import ErrorAnswer
from engram.api.threaded import threaded
from engram.runtime.idempotent_writes import MAX_KEY_CHARS

CONVERSATION = "/conversations/{conversation}"
REPLAYED = "Idempotent-Replayed"

ConversationPath = Annotated[
    str, Path(min_length=1, max_length=120, description="The conversation's id.")
]
RefPath = Annotated[str, Path(min_length=1, max_length=120)]
Limit = Annotated[int | None, Query(ge=1, le=25, description="5 by default.")]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        # Documented here, checked by the runtime, which says what a key may hold.
        json_schema_extra={"pattern": rf"^[\x21-\x7e]{{1,{MAX_KEY_CHARS}}}$"},
        description=(
            "Any unique string (a UUID): a retry with the same key and body gets the first "
            "answer and records nothing twice; the same key with another body is a 422. "
            "Scoped to the conversation (for a start: to the person and agent)."
        ),
    ),
]
_GONE: dict[int | str, dict[str, Any]] = {
    410: {"model": ErrorAnswer, "description": "The conversation was deleted."},
}
_WRITE_REFUSALS: dict[int | str, dict[str, Any]] = {
    **_GONE,
    422: {
        "model": ErrorAnswer,
        "description": "The Idempotency-Key was used before with a different body.",
    },
}


def _replayed(response: Response, replayed: bool) -> None:
    if replayed:
        response.headers[REPLAYED] = "true"


def install_conversation_routes(
    app: FastAPI, prefix: str, ops: ConversationApi, Bound: Any, NewPerson: Any
) -> None:
    """Add the conversation routes under `prefix`. `Bound` resolves the call's person and
    agent; `NewPerson` does too, creating the person on first use."""
    base = f"{prefix}/conversations"
    at = f"{prefix}{CONVERSATION}"
    tags: list[str | Enum] = ["conversations"]
    tools: list[str | Enum] = ["history tools"]

    @app.post(
        base,
        status_code=201,
        response_model=cm.Conversation,
        tags=tags,
        responses=_WRITE_REFUSALS,
    )
    @threaded
    def start_conversation(
        call: NewPerson,
        response: Response,
        key: IdempotencyKey = None,
        body: cm.NewConversation | None = None,
    ) -> dict[str, Any]:
        """Start a conversation between the header's person — always a participant — the
        agent and any other people named; answers its id."""
        answer, replayed = ops.start(call, key, body or cm.NewConversation())
        _replayed(response, replayed)
        return answer

    @app.get(base, response_model=cm.ConversationList, tags=tags)
    @threaded
    def list_conversations(call: Bound) -> dict[str, Any]:
        """The person's conversations with this agent, oldest first."""
        return ops.list(call)

    @app.get(at, response_model=cm.Transcript, tags=tags, responses=_GONE)
    @threaded
    def read_conversation(
        call: Bound,
        conversation: ConversationPath,
        after: Annotated[int, Query(ge=0, le=2**62, description="A log position.")] = 0,
        limit: Annotated[int, Query(ge=1, le=MAX_TRANSCRIPT_PAGE)] = TRANSCRIPT_PAGE,
    ) -> dict[str, Any]:
        """The conversation and its log after position `after`, one page at a time."""
        return ops.show(call, conversation, after, limit)

    @app.get(
        f"{at}/deletion-preview",
        response_model=cm.DeletionAnswer,
        tags=tags,
        responses=_GONE,
    )
    @threaded
    def preview_conversation_deletion(
        call: Bound, conversation: ConversationPath
    ) -> dict[str, Any]:
        """What deleting the conversation would do to the person's notes (which close,
        which survive, which reopen) and how many of others' close; changes nothing."""
        return ops.preview_delete(call, conversation)

    @app.delete(at, response_model=cm.DeletionAnswer, tags=tags, responses=_GONE)
    @threaded
    def delete_conversation(
        call: Bound,
        conversation: ConversationPath,
        for_everyone: Annotated[
            bool,
            Query(description="Delete it for every participant: a staff action, so 403 here."),
        ] = False,
    ) -> dict[str, Any]:
        """Delete a conversation for the person (C4): one only they take part in goes (its
        log and key); from a shared one their turns are excised and their notes whose text
        came from it close, while the others keep it. For everyone is a 403 (staff only)."""
        return ops.delete(call, conversation, for_everyone)

    @app.post(
        f"{at}/turns",
        status_code=201,
        response_model=cm.TurnAnswer,
        tags=tags,
        responses=_WRITE_REFUSALS,
    )
    @threaded
    def append_turn(
        call: Bound,
        conversation: ConversationPath,
        body: cm.NewTurn,
        response: Response,
        key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Append a turn: role user is the header's person speaking, role assistant the
        agent. Once an assistant turn commits, learning runs in the background."""
        answer, replayed = ops.append(call, conversation, key, body)
        _replayed(response, replayed)
        return answer

    @app.post(
        f"{at}/tool-calls",
        status_code=201,
        response_model=cm.ToolCallAnswer,
        tags=tags,
        responses=_WRITE_REFUSALS,
    )
    @threaded
    def record_tool_call(
        call: Bound,
        conversation: ConversationPath,
        body: cm.NewToolCall,
        response: Response,
        key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Record a tool the agent called in the conversation, and its result."""
        answer, replayed = ops.tool_call(call, conversation, key, body)
        _replayed(response, replayed)
        return answer

    Handler = Callable[..., Awaitable[dict[str, Any]]]

    def history_tool(
        route: Callable[..., Callable[[Handler], Handler]], path: str, model: Any, operation: str
    ) -> Callable[[Handler], Handler]:
        """A history tool's route: its own answer, key for key, under the tool's name."""
        return route(
            f"{at}{path}",
            response_model=model,
            tags=tools,
            response_model_exclude_unset=True,
            operation_id=operation,
            responses=_GONE,
        )

    @history_tool(app.post, "/find", cm.FindAnswer, "conversation_find")
    @threaded
    def conversation_find(
        call: Bound, conversation: ConversationPath, body: cm.FindRequest
    ) -> dict[str, Any]:
        """Earlier messages of this conversation: relevance (ranked by the query's words)
        or pattern (literal text or an RE2 expression, newest first) (H1, H2, H5)."""
        return ops.find(call, conversation, body)

    @history_tool(app.get, "/turns/{turn_id}", cm.TurnText, "conversation_read_turn")
    @threaded
    def conversation_read_turn(
        call: Bound, conversation: ConversationPath, turn_id: RefPath
    ) -> dict[str, Any]:
        """One turn of this conversation, its middle cut when long (H3)."""
        return ops.read_turn(call, conversation, turn_id)

    @history_tool(
        app.get, "/tool-calls/{call_id}/result", cm.ToolResult, "conversation_read_tool_result"
    )
    @threaded
    def conversation_read_tool_result(
        call: Bound, conversation: ConversationPath, call_id: RefPath
    ) -> dict[str, Any]:
        """What a recorded tool call returned, or a removal notice once removed (H4)."""
        return ops.read_tool_result(call, conversation, call_id)

    @history_tool(app.get, "/turns", cm.RecentTurns, "conversation_recent_turns")
    @threaded
    def conversation_recent_turns(
        call: Bound, conversation: ConversationPath, limit: Limit = None
    ) -> dict[str, Any]:
        """The newest turns of this conversation and their ids, oldest of them first."""
        return ops.recent_turns(call, conversation, limit)

    @history_tool(app.get, "/tool-calls", cm.ToolCallList, "conversation_list_tool_calls")
    @threaded
    def conversation_list_tool_calls(call: Bound, conversation: ConversationPath) -> dict[str, Any]:
        """Every tool call recorded in this conversation, and whether its result remains."""
        return ops.tool_calls(call, conversation)
