"""AsyncEngramClient: Engram's HTTP API from Python, as coroutines (httpx.AsyncClient).
The same methods as EngramClient (sync_client.py), for the same trusted server-side host:
a browser or anything the person controls must never hold the project API key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, TypeVar

import anyio
import httpx

from engram.client import models as m
from engram.client.retries import wait_after_answer, wait_after_error
from engram.client.routes import FindMode, Prepared, Role, Routes, TurnStatus, trusted_headers

T = TypeVar("T")


class AsyncEngramClient:
    """EngramClient's methods as coroutines; use it as `async with`."""

    def __init__(
        self,
        base_url: str,
        *,
        key: str,
        agent: str,
        person: str,
        timeout: float = 10.0,
        retries: int = 2,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._routes = Routes(agent)
        self._retries = retries
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers=trusted_headers(key, person),
            timeout=timeout,
            transport=transport,
        )

    async def __aenter__(self) -> AsyncEngramClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def _send(self, prepared: Prepared[T]) -> T:
        attempt = 0
        while True:
            try:
                response = await self._http.request(
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
            await anyio.sleep(wait)
            attempt += 1

    # ---- health ------------------------------------------------------------------------

    async def health(self) -> bool:
        """Whether the server is up (needs no key)."""
        return await self._send(self._routes.health())

    # ---- conversations -----------------------------------------------------------------

    async def start_conversation(
        self,
        participants: Sequence[str] = (),
        surface: str = "chat",
        incognito: bool = False,
        idempotency_key: str | None = None,
    ) -> m.Conversation:
        """Start a conversation between the person, the agent and the other people named."""
        return await self._send(
            self._routes.start_conversation(participants, surface, incognito, idempotency_key)
        )

    async def conversations(self) -> list[m.Conversation]:
        """The person's conversations with this agent, oldest first."""
        return await self._send(self._routes.conversations())

    async def conversation(
        self, conversation: str, after: int = 0, limit: int | None = None
    ) -> m.Transcript:
        """The conversation and one page of its log after position `after`."""
        return await self._send(self._routes.conversation(conversation, after, limit))

    async def append_turn(
        self,
        conversation: str,
        role: Role,
        text: str,
        status: TurnStatus = "committed",
        idempotency_key: str | None = None,
    ) -> m.Turn:
        """Append a turn (user: the person speaking; assistant: the agent). A retry reuses
        one idempotency key (a new UUID unless given), so the turn is recorded once."""
        return await self._send(
            self._routes.append_turn(conversation, role, text, status, idempotency_key)
        )

    async def record_tool_call(
        self,
        conversation: str,
        name: str,
        arguments: Mapping[str, Any],
        result: str,
        status: Literal["ok", "error"] = "ok",
        idempotency_key: str | None = None,
    ) -> m.ToolCall:
        """Record a tool the agent called and what it returned, once, like append_turn."""
        return await self._send(
            self._routes.record_tool_call(
                conversation, name, arguments, result, status, idempotency_key
            )
        )

    async def deletion_preview(self, conversation: str) -> m.Deletion:
        """What deleting the conversation would close, keep and reopen; changes nothing."""
        return await self._send(self._routes.deletion_preview(conversation))

    async def delete_conversation(self, conversation: str) -> m.Deletion:
        """Delete a conversation only the person takes part in, with its cascade (C4)."""
        return await self._send(self._routes.delete_conversation(conversation))

    # ---- the five history tools, bound to the conversation -----------------------------

    async def find(
        self,
        conversation: str,
        query: str,
        mode: FindMode = "relevance",
        limit: int | None = None,
    ) -> m.Found:
        """conversation_find: earlier messages of this conversation (H1, H2)."""
        return await self._send(self._routes.find(conversation, query, mode, limit))

    async def read_turn(self, conversation: str, turn: str) -> m.TurnText:
        """conversation_read_turn (H3)."""
        return await self._send(self._routes.read_turn(conversation, turn))

    async def read_tool_result(self, conversation: str, call: str) -> m.ToolResult:
        """conversation_read_tool_result (H4)."""
        return await self._send(self._routes.read_tool_result(conversation, call))

    async def recent_turns(self, conversation: str, limit: int | None = None) -> m.RecentTurns:
        """conversation_recent_turns: the newest turns, oldest of them first."""
        return await self._send(self._routes.recent_turns(conversation, limit))

    async def list_tool_calls(self, conversation: str) -> m.ToolCalls:
        """conversation_list_tool_calls."""
        return await self._send(self._routes.list_tool_calls(conversation))

    # ---- turn context ------------------------------------------------------------------

    async def assemble(self, conversation: str) -> m.Assembled:
        """The system block for a turn in the conversation, for its audience (A1-A9)."""
        return await self._send(self._routes.assemble(conversation))

    async def recall(self, conversation: str, limit: int | None = None) -> m.Recalled:
        """What memory_recall gives the agent in the conversation (R1, R2)."""
        return await self._send(self._routes.recall(conversation, limit))

    # ---- items -------------------------------------------------------------------------

    async def items(
        self, cursor: str | None = None, limit: int = 50, status: str = "active"
    ) -> m.ItemPage:
        """One page of the person's notes in creation order (status: active or all)."""
        return await self._send(self._routes.items(cursor, limit, status))

    async def item(self, item: str) -> m.ItemDetail:
        """One note with its versions, sources and usage."""
        return await self._send(self._routes.item(item))

    async def usage(self, item: str) -> list[m.UsageEntry]:
        """Every turn and tool answer that used the note."""
        return await self._send(self._routes.usage(item))

    async def create_item(
        self, text: str, kind: str, scope: str = "direct", durability: str = "lasting"
    ) -> m.ItemDetail:
        """Add a note to the person's memory (needs the agent's memory.tools.remember)."""
        return await self._send(self._routes.create_item(text, kind, scope, durability))

    async def search(self, query: str, limit: int | None = None) -> m.SearchResult:
        """Notes the person may receive that share words with the query, best first."""
        return await self._send(self._routes.search(query, limit))

    async def patch_item(
        self, item: str, text: str | None = None, scope: str | None = None
    ) -> m.ItemDetail:
        """Correct a note (a new version) or change its scope."""
        return await self._send(self._routes.patch_item(item, text, scope))

    async def delete_item(self, item: str, reason: str | None = None) -> m.DeletedItem:
        """Close a note's interval; its record stays (C2)."""
        return await self._send(self._routes.delete_item(item, reason))

    # ---- candidates --------------------------------------------------------------------

    async def candidates(self, status: str | None = None) -> list[m.Candidate]:
        """What learning suggested for the person, oldest first."""
        return await self._send(self._routes.candidates(status))

    async def decide(
        self,
        candidate: str,
        decision: Literal["approve", "reject"],
        revision: int,
        reason: str | None = None,
        apply: bool = False,
    ) -> m.Candidate:
        """Approve or reject the revision you reviewed (P6); a stale one is a 409."""
        return await self._send(self._routes.decide(candidate, decision, revision, reason, apply))

    async def apply_candidate(self, candidate: str) -> m.Candidate:
        """Turn an approved candidate into a note."""
        return await self._send(self._routes.apply_candidate(candidate))
