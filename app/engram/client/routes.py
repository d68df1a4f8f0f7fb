"""Engram's HTTP routes as prepared requests: the path, the body and how to read the
answer, built once per call, so both clients send the same thing and a retry repeats it
exactly (same Idempotency-Key included)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from engram.client import models as m
from engram.client.errors import EngramHTTPError, refusal_of

T = TypeVar("T", covariant=True)
A = TypeVar("A", bound=BaseModel)

Role = Literal["user", "assistant"]
TurnStatus = Literal["committed", "failed", "cancelled"]
FindMode = Literal["relevance", "pattern"]


@dataclass(frozen=True, slots=True)
class Prepared(Generic[T]):
    """One call: what to send and how to read what comes back."""

    method: str
    path: str
    read: Callable[[Any], T]
    body: Mapping[str, Any] | None = None
    params: Mapping[str, str | int] = field(default_factory=dict)
    idempotency_key: str | None = None
    writes: bool = True  # False for a POST that only reads (a search)

    @property
    def repeatable(self) -> bool:
        """Whether sending it again after a lost answer changes nothing."""
        return self.method == "GET" or not self.writes or self.idempotency_key is not None

    @property
    def headers(self) -> dict[str, str]:
        """Headers this call adds to the client's own."""
        return {"Idempotency-Key": self.idempotency_key} if self.idempotency_key else {}

    def answer(self, response: httpx.Response) -> T:
        """The typed answer, or the server's refusal raised as EngramHTTPError."""
        if response.status_code >= 400:
            raise refusal_of(response)
        try:
            return self.read(response.json())
        except (ValueError, ValidationError):
            raise EngramHTTPError(
                response.status_code,
                f"The answer to {self.method} {self.path} is not what Engram sends; check "
                "that the client and the server are the same version.",
            ) from None


def _model(kind: type[A]) -> Callable[[Any], A]:
    return kind.model_validate


def _listed(key: str, kind: type[A]) -> Callable[[Any], list[A]]:
    adapter = TypeAdapter(list[kind])  # type: ignore[valid-type]

    def read(data: Any) -> list[A]:
        return adapter.validate_python(data[key])

    return read


def _healthy(data: Any) -> bool:
    return bool(data["ok"])


def _segment(value: str) -> str:
    """A path segment: an id with a slash or a '?' in it names nothing else."""
    return quote(value, safe="")


def _key(given: str | None) -> str:
    return given if given is not None else str(uuid.uuid4())


def _without_none(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


class Routes:
    """The agent's routes; each method prepares one call."""

    def __init__(self, agent: str) -> None:
        self.prefix = f"/v1/memory/agents/{_segment(agent)}/memory"

    def _at(self, conversation: str, *rest: str) -> str:
        tail = "".join(f"/{_segment(part)}" for part in rest)
        return f"{self.prefix}/conversations/{_segment(conversation)}{tail}"

    # ---- health ------------------------------------------------------------------------

    def health(self) -> Prepared[bool]:
        """GET /v1/health."""
        return Prepared("GET", "/v1/health", _healthy)

    # ---- conversations -----------------------------------------------------------------

    def start_conversation(
        self,
        participants: Sequence[str],
        surface: str,
        incognito: bool,
        idempotency_key: str | None,
    ) -> Prepared[m.Conversation]:
        """POST …/conversations."""
        body = {"participants": list(participants), "surface": surface, "incognito": incognito}
        return Prepared(
            "POST",
            f"{self.prefix}/conversations",
            _model(m.Conversation),
            body,
            idempotency_key=_key(idempotency_key),
        )

    def conversations(self) -> Prepared[list[m.Conversation]]:
        """GET …/conversations."""
        path = f"{self.prefix}/conversations"
        return Prepared("GET", path, _listed("conversations", m.Conversation))

    def conversation(
        self, conversation: str, after: int, limit: int | None
    ) -> Prepared[m.Transcript]:
        """GET …/conversations/{c}."""
        params: dict[str, str | int] = {"after": after, **_without_none(limit=limit)}
        return Prepared("GET", self._at(conversation), _model(m.Transcript), params=params)

    def append_turn(
        self,
        conversation: str,
        role: Role,
        text: str,
        status: TurnStatus,
        idempotency_key: str | None,
    ) -> Prepared[m.Turn]:
        """POST …/conversations/{c}/turns."""
        body = {"role": role, "text": text, "status": status}
        return Prepared(
            "POST",
            self._at(conversation, "turns"),
            _model(m.Turn),
            body,
            idempotency_key=_key(idempotency_key),
        )

    def record_tool_call(
        self,
        conversation: str,
        name: str,
        arguments: Mapping[str, Any],
        result: str,
        status: Literal["ok", "error"],
        idempotency_key: str | None,
    ) -> Prepared[m.ToolCall]:
        """POST …/conversations/{c}/tool-calls."""
        body = {"name": name, "arguments": dict(arguments), "result": result, "status": status}
        return Prepared(
            "POST",
            self._at(conversation, "tool-calls"),
            _model(m.ToolCall),
            body,
            idempotency_key=_key(idempotency_key),
        )

    def deletion_preview(self, conversation: str) -> Prepared[m.Deletion]:
        """GET …/conversations/{c}/deletion-preview."""
        path = self._at(conversation, "deletion-preview")
        return Prepared("GET", path, _model(m.Deletion))

    def delete_conversation(self, conversation: str) -> Prepared[m.Deletion]:
        """DELETE …/conversations/{c}."""
        return Prepared("DELETE", self._at(conversation), _model(m.Deletion))

    # ---- the five history tools --------------------------------------------------------

    def find(
        self, conversation: str, query: str, mode: FindMode, limit: int | None
    ) -> Prepared[m.Found]:
        """POST …/conversations/{c}/find (conversation_find)."""
        body = {"query": query, "mode": mode, **_without_none(limit=limit)}
        path = self._at(conversation, "find")
        return Prepared("POST", path, _model(m.Found), body, writes=False)

    def read_turn(self, conversation: str, turn: str) -> Prepared[m.TurnText]:
        """GET …/conversations/{c}/turns/{turn} (conversation_read_turn)."""
        return Prepared("GET", self._at(conversation, "turns", turn), _model(m.TurnText))

    def read_tool_result(self, conversation: str, call: str) -> Prepared[m.ToolResult]:
        """GET …/conversations/{c}/tool-calls/{call}/result."""
        path = self._at(conversation, "tool-calls", call, "result")
        return Prepared("GET", path, _model(m.ToolResult))

    def recent_turns(self, conversation: str, limit: int | None) -> Prepared[m.RecentTurns]:
        """GET …/conversations/{c}/turns (conversation_recent_turns)."""
        path, params = self._at(conversation, "turns"), _without_none(limit=limit)
        return Prepared("GET", path, _model(m.RecentTurns), params=params)

    def list_tool_calls(self, conversation: str) -> Prepared[m.ToolCalls]:
        """GET …/conversations/{c}/tool-calls (conversation_list_tool_calls)."""
        return Prepared("GET", self._at(conversation, "tool-calls"), _model(m.ToolCalls))

    # ---- turn context ------------------------------------------------------------------

    def assemble(self, conversation: str) -> Prepared[m.Assembled]:
        """POST …/assemble."""
        body = {"conversation": conversation}
        return Prepared("POST", f"{self.prefix}/assemble", _model(m.Assembled), body)

    def recall(self, conversation: str, limit: int | None) -> Prepared[m.Recalled]:
        """POST …/recall."""
        body = {"conversation": conversation, **_without_none(limit=limit)}
        return Prepared("POST", f"{self.prefix}/recall", _model(m.Recalled), body)

    # ---- items -------------------------------------------------------------------------

    def items(self, cursor: str | None, limit: int, status: str) -> Prepared[m.ItemPage]:
        """GET …/items."""
        params = {"limit": limit, "status": status, **_without_none(cursor=cursor)}
        return Prepared("GET", f"{self.prefix}/items", _model(m.ItemPage), params=params)

    def item(self, item: str) -> Prepared[m.ItemDetail]:
        """GET …/items/{id}."""
        return Prepared("GET", f"{self.prefix}/items/{_segment(item)}", _model(m.ItemDetail))

    def usage(self, item: str) -> Prepared[list[m.UsageEntry]]:
        """GET …/items/{id}/usage."""
        path = f"{self.prefix}/items/{_segment(item)}/usage"
        return Prepared("GET", path, _listed("usage", m.UsageEntry))

    def create_item(
        self, text: str, kind: str, scope: str, durability: str
    ) -> Prepared[m.ItemDetail]:
        """POST …/items."""
        body = {"text": text, "kind": kind, "scope": scope, "durability": durability}
        return Prepared("POST", f"{self.prefix}/items", _model(m.ItemDetail), body)

    def search(self, query: str, limit: int | None) -> Prepared[m.SearchResult]:
        """POST …/search."""
        body = {"query": query, **_without_none(limit=limit)}
        path = f"{self.prefix}/search"
        return Prepared("POST", path, _model(m.SearchResult), body, writes=False)

    def patch_item(self, item: str, text: str | None, scope: str | None) -> Prepared[m.ItemDetail]:
        """PATCH …/items/{id}."""
        path, body = f"{self.prefix}/items/{_segment(item)}", _without_none(text=text, scope=scope)
        return Prepared("PATCH", path, _model(m.ItemDetail), body)

    def delete_item(self, item: str, reason: str | None) -> Prepared[m.DeletedItem]:
        """DELETE …/items/{id}."""
        path, body = f"{self.prefix}/items/{_segment(item)}", _without_none(reason=reason)
        return Prepared("DELETE", path, _model(m.DeletedItem), body)

    # ---- candidates --------------------------------------------------------------------

    def candidates(self, status: str | None) -> Prepared[list[m.Candidate]]:
        """GET …/candidates."""
        path, params = f"{self.prefix}/candidates", _without_none(status=status)
        return Prepared("GET", path, _listed("candidates", m.Candidate), params=params)

    def decide(
        self,
        candidate: str,
        decision: Literal["approve", "reject"],
        revision: int,
        reason: str | None,
        apply: bool,
    ) -> Prepared[m.Candidate]:
        """POST …/candidates/{id}/decision."""
        path = f"{self.prefix}/candidates/{_segment(candidate)}/decision"
        body = {"decision": decision, "revision": revision, "apply": apply}
        return Prepared("POST", path, _model(m.Candidate), {**body, **_without_none(reason=reason)})

    def apply_candidate(self, candidate: str) -> Prepared[m.Candidate]:
        """POST …/candidates/{id}/apply."""
        path = f"{self.prefix}/candidates/{_segment(candidate)}/apply"
        return Prepared("POST", path, _model(m.Candidate))


PERSON_HEADER = "X-Engram-External-User-Id"


def trusted_headers(key: str, person: str) -> dict[str, str]:
    """The project API key and the trusted person, sent with every call."""
    return {"Authorization": f"Bearer {key}", PERSON_HEADER: person}
