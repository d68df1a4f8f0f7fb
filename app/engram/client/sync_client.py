"""EngramClient: Engram's HTTP API from Python, blocking (httpx.Client).

For a trusted server-side host only: the client holds a project API key and names the
person in the trusted X-Engram-External-User-Id header. A browser, a mobile app or any
code the person controls must never hold the key — whoever has it can name any person.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, TypeVar

import httpx

from engram.client import models as m
from engram.client.retries import wait_after_answer, wait_after_error
from engram.client.routes import FindMode, Prepared, Role, Routes, TurnStatus, trusted_headers

T = TypeVar("T")


class EngramClient:
    """One agent's memory of one person, over HTTP. Every method raises EngramHTTPError
    (status and the server's sentence) when Engram refuses, and httpx.TransportError when
    the server cannot be reached after `retries` more tries."""

    def __init__(
        self,
        base_url: str,
        *,
        key: str,
        agent: str,
        person: str,
        timeout: float = 10.0,
        retries: int = 2,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._routes = Routes(agent)
        self._retries = retries
        self._http = httpx.Client(
            base_url=base_url,
            headers=trusted_headers(key, person),
            timeout=timeout,
            transport=transport,
        )

    def __enter__(self) -> EngramClient:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def _send(self, prepared: Prepared[T]) -> T:
        attempt = 0
        while True:
            try:
                response = self._http.request(
                    prepared.method,
                    prepared.path,
                    json=prepared.body,
                    params=prepared.params,
                    headers=prepared.headers,
                )
            except httpx.TransportError as error:
                wait = wait_after_error(error, prepared, attempt, self._retries)
                if wait is None:
                    raise
            else:
                wait = wait_after_answer(response, attempt, self._retries)
                if wait is None:
                    return prepared.answer(response)
            time.sleep(wait)
            attempt += 1

    # ---- health ------------------------------------------------------------------------

    def health(self) -> bool:
        """Whether the server is up (needs no key)."""
        return self._send(self._routes.health())

    # ---- conversations -----------------------------------------------------------------

    def start_conversation(
        self,
        participants: Sequence[str] = (),
        surface: str = "chat",
        incognito: bool = False,
        idempotency_key: str | None = None,
    ) -> m.Conversation:
        """Start a conversation between the person, the agent and the other people named."""
        return self._send(
            self._routes.start_conversation(participants, surface, incognito, idempotency_key)
        )

    def conversations(self) -> list[m.Conversation]:
        """The person's conversations with this agent, oldest first."""
        return self._send(self._routes.conversations())

    def conversation(
        self, conversation: str, after: int = 0, limit: int | None = None
    ) -> m.Transcript:
        """The conversation and one page of its log after position `after`."""
        return self._send(self._routes.conversation(conversation, after, limit))

    def append_turn(
        self,
        conversation: str,
        role: Role,
        text: str,
        status: TurnStatus = "committed",
        idempotency_key: str | None = None,
    ) -> m.Turn:
        """Append a turn (user: the person speaking; assistant: the agent). A retry reuses
        one idempotency key (a new UUID unless given), so the turn is recorded once."""
        return self._send(
            self._routes.append_turn(conversation, role, text, status, idempotency_key)
        )

    def record_tool_call(
        self,
        conversation: str,
        name: str,
        arguments: Mapping[str, Any],
        result: str,
        status: Literal["ok", "error"] = "ok",
        idempotency_key: str | None = None,
    ) -> m.ToolCall:
        """Record a tool the agent called and what it returned, once, like append_turn."""
        return self._send(
            self._routes.record_tool_call(
                conversation, name, arguments, result, status, idempotency_key
            )
        )

    def deletion_preview(self, conversation: str) -> m.Deletion:
        """What deleting the conversation would close, keep and reopen; changes nothing."""
        return self._send(self._routes.deletion_preview(conversation))

    def delete_conversation(self, conversation: str) -> m.Deletion:
        """Delete a conversation only the person takes part in, with its cascade (C4)."""
        return self._send(self._routes.delete_conversation(conversation))

    # ---- the five history tools, bound to the conversation -----------------------------

    def find(
        self,
        conversation: str,
        query: str,
        mode: FindMode = "relevance",
        limit: int | None = None,
    ) -> m.Found:
        """conversation_find: earlier messages of this conversation (H1, H2)."""
        return self._send(self._routes.find(conversation, query, mode, limit))

    def read_turn(self, conversation: str, turn: str) -> m.TurnText:
        """conversation_read_turn (H3)."""
        return self._send(self._routes.read_turn(conversation, turn))

    def read_tool_result(self, conversation: str, call: str) -> m.ToolResult:
        """conversation_read_tool_result (H4)."""
        return self._send(self._routes.read_tool_result(conversation, call))

    def recent_turns(self, conversation: str, limit: int | None = None) -> m.RecentTurns:
        """conversation_recent_turns: the newest turns, oldest of them first."""
        return self._send(self._routes.recent_turns(conversation, limit))

    def list_tool_calls(self, conversation: str) -> m.ToolCalls:
        """conversation_list_tool_calls."""
        return self._send(self._routes.list_tool_calls(conversation))

    # ---- turn context ------------------------------------------------------------------

    def assemble(self, conversation: str) -> m.Assembled:
        """The system block for a turn in the conversation, for its audience (A1-A9)."""
        return self._send(self._routes.assemble(conversation))

    def recall(self, conversation: str, limit: int | None = None) -> m.Recalled:
        """What memory_recall gives the agent in the conversation (R1, R2)."""
        return self._send(self._routes.recall(conversation, limit))

    # ---- items -------------------------------------------------------------------------

    def items(
        self, cursor: str | None = None, limit: int = 50, status: str = "active"
    ) -> m.ItemPage:
        """One page of the person's notes in creation order (status: active or all)."""
        return self._send(self._routes.items(cursor, limit, status))

    def item(self, item: str) -> m.ItemDetail:
        """One note with its versions, sources and usage."""
        return self._send(self._routes.item(item))

    def usage(self, item: str) -> list[m.UsageEntry]:
        """Every turn and tool answer that used the note."""
        return self._send(self._routes.usage(item))

    def create_item(
        self, text: str, kind: str, scope: str = "direct", durability: str = "lasting"
    ) -> m.ItemDetail:
        """Add a note to the person's memory (needs the agent's memory.tools.remember)."""
        return self._send(self._routes.create_item(text, kind, scope, durability))

    def search(self, query: str, limit: int | None = None) -> m.SearchResult:
        """Notes the person may receive that share words with the query, best first."""
        return self._send(self._routes.search(query, limit))

    def patch_item(
        self, item: str, text: str | None = None, scope: str | None = None
    ) -> m.ItemDetail:
        """Correct a note (a new version) or change its scope."""
        return self._send(self._routes.patch_item(item, text, scope))

    def delete_item(self, item: str, reason: str | None = None) -> m.DeletedItem:
        """Close a note's interval; its record stays (C2)."""
        return self._send(self._routes.delete_item(item, reason))

    # ---- candidates --------------------------------------------------------------------

    def candidates(self, status: str | None = None) -> list[m.Candidate]:
        """What learning suggested for the person, oldest first."""
        return self._send(self._routes.candidates(status))

    def decide(
        self,
        candidate: str,
        decision: Literal["approve", "reject"],
        revision: int,
        reason: str | None = None,
        apply: bool = False,
    ) -> m.Candidate:
        """Approve or reject the revision you reviewed (P6); a stale one is a 409."""
        return self._send(self._routes.decide(candidate, decision, revision, reason, apply))

    def apply_candidate(self, candidate: str) -> m.Candidate:
        """Turn an approved candidate into a note."""
        return self._send(self._routes.apply_candidate(candidate))
