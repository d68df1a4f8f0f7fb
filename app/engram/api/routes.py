"""The typed memory API's routes — a thin face over control/ and runtime/.

    GET    /v1/health
    GET    /v1/memory/agents/{agent}/memory/items            ?cursor=&limit=&status=active|all
    POST   /v1/memory/agents/{agent}/memory/items            {text, kind, scope?, durability?}
    POST   /v1/memory/agents/{agent}/memory/search           {query, limit?}
    GET    /v1/memory/agents/{agent}/memory/items/{id}
    GET    /v1/memory/agents/{agent}/memory/items/{id}/usage
    PATCH  /v1/memory/agents/{agent}/memory/items/{id}       {text?, scope?}
    DELETE /v1/memory/agents/{agent}/memory/items/{id}       {reason?}
    GET    /v1/memory/agents/{agent}/memory/candidates       ?status=
    POST   /v1/memory/agents/{agent}/memory/candidates/{id}/decision
                                               {decision: approve|reject, revision, reason?, apply?}
    POST   /v1/memory/agents/{agent}/memory/candidates/{id}/apply

Every call but health needs `Authorization: Bearer <project API key>`. The person comes
only from the trusted `X-Engram-External-User-Id` header, set by the application's server
code — never from the body, the path or the query (C1, P3). The agent must be configured.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engram.control import candidates, persons
from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.control.views import NoteView
from engram.model.agents import AgentConfig
from engram.model.errors import (
    Conflict,
    EngramError,
    InvalidInput,
    KeyUnavailable,
    NotAllowed,
    NotFound,
)
from engram.model.notes import NoteFilter
from engram.model.scope import Audience, Durability, Kind, Scope, parse_enum
from engram.runtime import agents, api_keys, memory_tools
from engram.store.store import Store

log = logging.getLogger(__name__)

PERSON_HEADER = "X-Engram-External-User-Id"
MAX_BODY_BYTES = 64 * 1024
PAGE = 50
MAX_PAGE = 100
MAX_OFFSET = 10**9
_PREFIX = re.compile(r"^/v1/memory/agents/(?P<agent>[^/]+)/memory(?P<rest>/.*)$")


@dataclass(frozen=True, slots=True)
class Response:
    """What a route answers: a status and a JSON body."""

    status: int
    body: Any


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP request as the routes see it."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: bytes


class Unauthorized(EngramError):
    """No key, or not a valid one."""


@dataclass(frozen=True, slots=True)
class Call:
    """One authenticated request, bound to its person and agent."""

    session: PersonSession
    agent: AgentConfig
    query: Mapping[str, str]
    body: dict[str, Any]


Route = Callable[[Call, str], Any]
# Refusals by kind, most specific first; any other refusal is the caller's mistake (400).
_STATUS: tuple[tuple[type[EngramError], int], ...] = (
    (Unauthorized, 401),
    (NotFound, 404),
    (Conflict, 409),
    (NotAllowed, 403),
    (KeyUnavailable, 503),
    (EngramError, 400),
)


class MemoryApi:
    """Routes a request to control/ and runtime/; errors become one-sentence JSON."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._routes: list[tuple[str, re.Pattern[str], Route, int]] = [
            ("GET", re.compile(r"^/items$"), self._list, 200),
            ("POST", re.compile(r"^/items$"), self._create, 201),
            ("POST", re.compile(r"^/search$"), self._search, 200),
            ("GET", re.compile(r"^/items/(?P<id>[^/]+)$"), self._show, 200),
            ("GET", re.compile(r"^/items/(?P<id>[^/]+)/usage$"), self._usage, 200),
            ("PATCH", re.compile(r"^/items/(?P<id>[^/]+)$"), self._patch, 200),
            ("DELETE", re.compile(r"^/items/(?P<id>[^/]+)$"), self._delete, 200),
            ("GET", re.compile(r"^/candidates$"), self._candidates, 200),
            ("POST", re.compile(r"^/candidates/(?P<id>[^/]+)/decision$"), self._decide, 200),
            ("POST", re.compile(r"^/candidates/(?P<id>[^/]+)/apply$"), self._apply, 200),
        ]

    def handle(
        self,
        method: str,
        path: str,
        query: Mapping[str, str],
        headers: Mapping[str, str],
        body: bytes,
    ) -> Response:
        """Answer one request."""
        try:
            return self._handle(Request(method, path, query, headers, body))
        except EngramError as error:
            status = next(code for kind, code in _STATUS if isinstance(error, kind))
            return Response(status, {"error": str(error)})
        except Exception:
            log.exception("the API failed on %s %s", method, path)
            return Response(500, {"error": "Something went wrong inside Engram; see its log."})

    def _handle(self, request: Request) -> Response:
        method, path, query, headers, body = (
            request.method,
            request.path,
            request.query,
            request.headers,
            request.body,
        )
        if path == "/v1/health" and method == "GET":
            return Response(200, {"ok": True})
        matched = _PREFIX.match(path)
        if matched is None:
            raise NotFound(f"There is no {path}.")
        actor = self._key(headers)
        rest, agent = matched["rest"], matched["agent"]
        known = [(v, m, r, s) for v, p, r, s in self._routes if (m := p.match(rest)) is not None]
        if not known:
            raise NotFound(f"There is no {path}.")
        chosen = next(((m, r, s) for v, m, r, s in known if v == method), None)
        if chosen is None:
            allowed = ", ".join(v for v, _, _, _ in known)
            return Response(405, {"error": f"{path} answers {allowed}, not {method}."})
        found, route, status = chosen
        config = agents.require_agent(self.store, agent)
        person, data = self._person(headers), _json(body)
        if route == self._create:  # a new user of the application may write a first note
            config.require_writable(parse_enum(Kind, _text(data, "kind"), "kind"))
            _text(data, "text")  # checked before anyone is created for it
            persons.ensure_person(self.store, person)
        call = Call(PersonSession.open(self.store, person, actor), config, query, data)
        return Response(status, route(call, found.groupdict().get("id") or ""))

    def _key(self, headers: Mapping[str, str]) -> str:
        auth = _header(headers, "Authorization") or ""
        scheme, _, token = auth.partition(" ")
        bearer = scheme.lower() == "bearer"
        record = api_keys.check_key(self.store, token.strip()) if bearer else None
        if record is None:
            raise Unauthorized("Send a valid project API key as 'Authorization: Bearer …'.")
        return f"api:{record.id}"  # the key's id: unique, short; its label is in `keys list`

    def _person(self, headers: Mapping[str, str]) -> str:
        person = _header(headers, PERSON_HEADER)
        if not person:
            raise InvalidInput(
                f"Say whose memory this is in the {PERSON_HEADER} header, from trusted server code."
            )
        return person

    # ---- items ---------------------------------------------------------------------------

    def _list(self, call: Call, _id: str) -> Any:
        limit = _int(call.query.get("limit"), PAGE, 1, MAX_PAGE, "limit")
        offset = _cursor(call.query.get("cursor"))
        status = call.query.get("status", "active")
        if status not in ("active", "all"):
            raise InvalidInput("status is active or all.")
        shown = (
            NoteFilter(order="created")
            if status == "active"
            else NoteFilter(statuses=None, order="created")
        )
        total, notes = memory_control.page(call.session, shown, offset=offset, limit=limit)
        texts = memory_control.texts_of(call.session, notes)
        following = offset + len(notes)
        return {
            "items": [NoteView(n, texts.get(n.id)).to_json() for n in notes],
            "total": total,
            "next_cursor": _encode(following) if following < total else None,
        }

    def _create(self, call: Call, _id: str) -> Any:
        body = call.body
        note = memory_control.add_note(
            call.session,
            _text(body, "text"),
            parse_enum(Kind, _text(body, "kind"), "kind"),
            parse_enum(Scope, _text(body, "scope", Scope.DIRECT.value), "scope"),
            durability=parse_enum(
                Durability, _text(body, "durability", Durability.LASTING.value), "durability"
            ),
        )
        return memory_control.show_note(call.session, note)

    def _search(self, call: Call, _id: str) -> Any:
        limit = call.body.get("limit")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
            raise InvalidInput("limit must be a whole number.")
        alone = Audience.subject_alone(call.session.person)
        return memory_tools.find_items(
            self.store, call.session.person, alone, _text(call.body, "query"), limit
        )

    def _show(self, call: Call, note_id: str) -> Any:
        return memory_control.show_note(call.session, note_id)

    def _usage(self, call: Call, note_id: str) -> Any:
        return {"usage": memory_control.show_note(call.session, note_id).get("usage", [])}

    def _patch(self, call: Call, note_id: str) -> Any:
        body = call.body
        if "text" not in body and "scope" not in body:
            raise InvalidInput("Send text, scope or both.")
        text = _text(body, "text") if "text" in body else None
        scope = parse_enum(Scope, _text(body, "scope"), "scope") if "scope" in body else None
        new_id = memory_control.edit_note(call.session, note_id, text=text, scope=scope)
        return memory_control.show_note(call.session, new_id)

    def _delete(self, call: Call, note_id: str) -> Any:
        reason = call.body.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise InvalidInput("reason must be a string.")
        memory_control.delete_note(call.session, note_id, reason)
        return {"item_id": note_id, "deleted": True}

    # ---- candidates ----------------------------------------------------------------------

    def _candidates(self, call: Call, _id: str) -> Any:
        return {"candidates": candidates.list_candidates(call.session, call.query.get("status"))}

    def _decide(self, call: Call, candidate_id: str) -> Any:
        body = call.body
        revision = body.get("revision")
        if not isinstance(revision, int) or isinstance(revision, bool):
            raise InvalidInput("Send the revision you reviewed (a whole number).")
        decision = body.get("decision")
        if decision == "approve":
            apply_now = body.get("apply", False)
            if not isinstance(apply_now, bool):
                raise InvalidInput("apply must be true or false.")
            return candidates.approve(call.session, candidate_id, revision, apply_now=apply_now)
        if decision == "reject":
            return candidates.reject(call.session, candidate_id, revision, _text(body, "reason"))
        raise InvalidInput("decision is approve or reject.")

    def _apply(self, call: Call, candidate_id: str) -> Any:
        return candidates.apply(call.session, candidate_id)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), None)


def _json(body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    if len(body) > MAX_BODY_BYTES:
        raise InvalidInput(f"The request body may hold at most {MAX_BODY_BYTES // 1024} KiB.")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # bad JSON, bad UTF-8, absurd numbers or nesting
        raise InvalidInput("The request body must be a JSON object.") from None
    if not isinstance(data, dict):
        raise InvalidInput("The request body must be a JSON object.")
    if any(re.search(r"person|user", str(k), re.IGNORECASE) for k in data):
        raise InvalidInput(
            f"The person comes from the {PERSON_HEADER} header, never from the body."
        )
    return data


def _text(body: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = body.get(key, default)
    if not isinstance(value, str):
        raise InvalidInput(f"Send {key!r} as a string.")
    return value


def _int(value: str | None, default: int, low: int, high: int, name: str) -> int:
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise InvalidInput(f"{name} must be a whole number.") from None
    return max(low, min(high, number))


def _encode(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode()


def _cursor(value: str | None) -> int:
    if not value:
        return 0
    try:
        decoded = base64.urlsafe_b64decode(value.encode()).decode()
        offset = int(decoded[2:]) if decoded.startswith("o:") and len(decoded) < 20 else -1
        if not 0 <= offset <= MAX_OFFSET:
            raise ValueError
        return offset
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidInput("That cursor is not one this API gave out.") from None
