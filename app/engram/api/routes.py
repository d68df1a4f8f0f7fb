"""The typed memory API's operations — framework-neutral and thin over control/ and
runtime/. app.py maps HTTP onto them (FastAPI); nothing here knows about HTTP.

    GET    /v1/health
    GET    /v1/memory/agents/{agent}/memory/items            ?cursor=&limit=&status=active|all
    POST   /v1/memory/agents/{agent}/memory/items            {text, kind, scope?, durability?}
    POST   /v1/memory/agents/{agent}/memory/search           {query, limit?}
    POST   /v1/memory/agents/{agent}/memory/assemble         {conversation}
    POST   /v1/memory/agents/{agent}/memory/recall           {conversation, limit?}
    GET    /v1/memory/agents/{agent}/memory/items/{id}
    GET    /v1/memory/agents/{agent}/memory/items/{id}/usage
    PATCH  /v1/memory/agents/{agent}/memory/items/{id}       {text?, scope?}
    DELETE /v1/memory/agents/{agent}/memory/items/{id}       {reason?}
    GET    /v1/memory/agents/{agent}/memory/candidates       ?status=
    POST   /v1/memory/agents/{agent}/memory/candidates/{id}/decision
                                               {decision: approve|reject, revision, reason?, apply?}
    POST   /v1/memory/agents/{agent}/memory/candidates/{id}/apply

The conversation routes (…/conversations, turns, tool calls, the history tools) are in
conversation_routes.py.

Every call but health needs `Authorization: Bearer <project API key>`. The person comes
only from the trusted `X-Engram-External-User-Id` header, set by the application's server
code — never from the body, the path or the query (C1, P3). The agent must be configured.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from engram.api import answers, models
from engram.control import candidates, persons, views
from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.model.agents import AgentConfig
from engram.model.errors import (
    ChangedOutsideEngram,
    Conflict,
    CorruptStore,
    EngramError,
    InvalidInput,
    KeyUnavailable,
    NotAllowed,
    NotFound,
    ReadOnlyStore,
    StorageFault,
    StoreReleased,
)
from engram.model.ids import ConversationId, PersonId
from engram.model.notes import NoteFilter
from engram.runtime import agents, api_keys, context, memory_tools
from engram.runtime.conversations import ConversationGone
from engram.runtime.idempotent_writes import ReusedKey
from engram.runtime.usage_writer import SETTLE_SECONDS, UsageRecorder
from engram.store import freshness
from engram.store.freshness import Mark, Version
from engram.store.store import Store

log = logging.getLogger(__name__)

PERSON_HEADER = "X-Engram-External-User-Id"
MAX_BODY_BYTES = 64 * 1024
PAGE = 50
MAX_PAGE = 100
_CURSOR = re.compile(r"^k:(\d{1,18}):([A-Za-z0-9_:.-]{1,120})$")


class Unauthorized(EngramError):
    """No key, or not a valid one."""


class TooLarge(EngramError):
    """The request body is over the limit."""


class BodyTimeout(EngramError):
    """The request body stopped arriving."""


# Refusals by kind, most specific first; any other refusal is the caller's mistake (400).
STATUS_OF: tuple[tuple[type[EngramError], int], ...] = (
    (Unauthorized, 401),
    (TooLarge, 413),
    (BodyTimeout, 408),
    (ReusedKey, 422),
    (ConversationGone, 410),
    (NotFound, 404),
    (Conflict, 409),  # stale revisions and state conflicts (StateConflict) alike
    (NotAllowed, 403),
    (KeyUnavailable, 503),
    (ReadOnlyStore, 503),
    (StorageFault, 503),  # a full disk, an I/O error, a database server down: not damage
    (CorruptStore, 500),  # damage the server found in its own store, not the caller's mistake
    (StoreReleased, 503),  # a read stopped for an erasure elsewhere: try again
    (EngramError, 400),
)


def status_of(error: EngramError) -> int:
    """The HTTP status a refusal answers with."""
    return next(code for kind, code in STATUS_OF if isinstance(error, kind))


@dataclass(frozen=True, slots=True)
class Call:
    """One authenticated request, bound to its person and agent."""

    session: PersonSession
    agent: AgentConfig
    mark: Mark | None = None  # the store as it stood when the call was bound (answers.py)
    key: bytes = b""  # what stands for the caller's key in what is kept
    version: Version | None = None  # the store's data_version before `mark` was read
    generation: object = None  # the kept answers when `mark` was read (answers.generation)


class MemoryApi:
    """The operations; errors are EngramErrors whose kind decides the status."""

    def __init__(self, store: Store, usage: UsageRecorder | None = None) -> None:
        self.store = store
        self.usage_records = usage  # where usage records go; None: written in the request

    # ---- who is calling ------------------------------------------------------------------

    def caller(self, authorization: str | None) -> str:
        """The actor for a valid project API key ('Authorization: Bearer …')."""
        scheme, _, token = (authorization or "").partition(" ")
        try:
            record = (
                api_keys.check_key(self.store, token.strip())
                if scheme.lower() == "bearer"
                else None
            )
        except ChangedOutsideEngram as forged:  # refused like an unknown key, but said why
            sentence = forged.for_command_line()
            log.warning("%s", sentence)
            raise Unauthorized(sentence) from None
        if record is None:
            raise Unauthorized("Send a valid project API key as 'Authorization: Bearer …'.")
        return f"api:{record.id}"  # the key's id: unique, short; its label is in `keys list`

    def open(self, actor: str, people: list[str], agent: str, *, new_person: bool = False) -> Call:
        """The call's person (from the trusted header, sent once) and configured agent."""
        person = _person(people)
        config = agents.require_agent(self.store, agent)
        if new_person:  # a new user of the application may write a first note
            persons.ensure_person(self.store, person)
        return Call(PersonSession.open(self.store, person, actor), config)

    def bind(self, authorization: str, people: list[str], agent: str) -> Call:
        """`open(caller(authorization), people, agent)`, or the same call bound before
        while the store has not changed since (answers.py): one small read instead of the
        key's, the agent's and the person's."""
        try:
            person = PersonId(_person(people))
        except InvalidInput:  # refused as always: a bad key first, then the header
            return self.open(self.caller(authorization), people, agent)
        since = answers.generation(self.store)
        version = freshness.version_now(self.store)  # before the mark (freshness.py)
        mark = freshness.mark_now(self.store, person)
        digest = answers.key_digest(authorization)
        key = ("call", digest, person, agent)
        found = answers.kept(self.store, key, mark)
        if isinstance(found, Call):  # a commit elsewhere (usage, a conversation) since
            if found.version != version or found.generation is not since:
                found = replace(found, version=version, generation=since)
                answers.keep(self.store, key, mark, found, since)
            return found
        bound = self.open(self.caller(authorization), people, agent)
        call = Call(bound.session, bound.agent, mark, digest, version, since)
        answers.keep(self.store, key, mark, call, since)
        return call

    def bind_kept(self, authorization: str, people: list[str], agent: str) -> Call | None:
        """The call `bind` gave for the same key, person and agent, if nobody has committed
        to the store since (SQLite's data_version): no table read, so the event loop may
        ask. None: ask `bind`."""
        if len(people) != 1 or self.store.release_requested():  # it runs no statement
            return None
        found = answers.peek(
            self.store, ("call", answers.key_digest(authorization), people[0].strip(), agent)
        )
        if not isinstance(found, Call) or found.version is None:
            return None
        return found if freshness.version_now(self.store) == found.version else None

    def kept_json(self, call: Call, question: Hashable) -> bytes | None:
        """The JSON given for the same question (with the same key, agent and person) while
        the store has not changed since the call was bound: memory only, no store read,
        so the event loop may ask."""
        if call.mark is None:
            return None
        found = answers.kept(self.store, self._question(call, question), call.mark)
        return found if isinstance(found, bytes) else None

    def answer_json(
        self,
        call: Call,
        question: Hashable,
        model: type[BaseModel],
        read: Callable[[], Any],
        ends: Callable[[], datetime | None] = lambda: None,
    ) -> bytes:
        """The JSON of `read()` checked against `model` (or what kept_json has); `ends`,
        asked after the read: when the answer stops holding with no write (M3)."""
        found = self.kept_json(call, question)
        if found is not None:
            return found
        answer = model.model_validate(read())
        body = answer.model_dump_json(by_alias=True).encode()
        if call.mark is not None and getattr(answer, "error", None) is None:  # read whole
            question_key = self._question(call, question)
            answers.keep(self.store, question_key, call.mark, body, call.generation, ends())
        return body

    @staticmethod
    def _question(call: Call, question: Hashable) -> Hashable:
        return ("answer", call.key, call.session.person, call.agent.name, question)

    # ---- items ---------------------------------------------------------------------------

    @staticmethod
    def items_question(cursor: str | None, limit: int, status: str) -> Hashable:
        return ("items", cursor, limit, status)

    def list_items_json(self, call: Call, cursor: str | None, limit: int, status: str) -> bytes:
        """list_items as JSON, kept while the store is unchanged."""
        return self.answer_json(
            call,
            self.items_question(cursor, limit, status),
            models.ItemPage,
            lambda: self.list_items(call, cursor, limit, status),
        )

    @staticmethod
    def search_question(body: models.SearchRequest) -> Hashable:
        return ("search", body.query, body.limit)

    def search_json(self, call: Call, body: models.SearchRequest) -> bytes:
        """search as JSON, kept while the store is unchanged."""
        return self.answer_json(
            call,
            self.search_question(body),
            models.SearchAnswer,
            lambda: self.search(call, body),
            lambda: memory_control.search_own_ends(call.session),
        )

    def list_items(self, call: Call, cursor: str | None, limit: int, status: str) -> dict[str, Any]:
        """One keyset page of notes in creation order."""
        shown = NoteFilter(order="created") if status == "active" else NoteFilter(statuses=None)
        after = decode_cursor(cursor)
        total, views, more = memory_control.page_after_shown(call.session, shown, after, limit)
        return {
            "items": [view.to_json() for view in views],
            "total": total,
            "next_cursor": encode_cursor(*_key(views[-1].note)) if more else None,
        }

    def create_item(self, call: Call, body: models.NewItem) -> dict[str, Any]:
        """A person's own note."""
        call.agent.require_writable(body.kind)
        note = memory_control.add_note(
            call.session, body.text, body.kind, body.scope, durability=body.durability
        )
        return memory_control.show_note(call.session, note)

    def check_new_item(self, agent: str, body: models.NewItem) -> None:
        """Refuse a kind the agent may not write before anyone is created for it (P2)."""
        config = agents.require_agent(self.store, agent)
        config.require_remember()
        config.require_writable(body.kind)

    def search(self, call: Call, body: models.SearchRequest) -> dict[str, Any]:
        """Notes the person alone may receive that share words with the query."""
        return memory_control.search_own(call.session, body.query, body.limit)

    def assemble(self, call: Call, body: models.TurnRequest) -> dict[str, Any]:
        """The block a turn in the conversation gets (A1-A9), for its audience (S1-S3);
        its notes are recorded as used, as a real turn's are."""
        block = context.assemble_turn(
            self.store, _turn(call, body), record_usage=True, usage=self.usage_records
        )
        return views.assembled_json(block)

    def recall(self, call: Call, body: models.RecallRequest) -> dict[str, Any]:
        """memory_recall for a turn in the conversation (R1, R2), recorded as used."""
        result = memory_tools.recall_for_turn(
            self.store,
            _turn(call, body),
            call.agent,
            limit=body.limit,
            record_usage=True,
            usage=self.usage_records,
        )
        return views.recall_json(result)

    def show_item(self, call: Call, note_id: str) -> dict[str, Any]:
        """A note with its versions, sources and usage (reads answered just before are in
        it: their usage, still being written, is waited for briefly — never failed on)."""
        self._settle_usage()
        return memory_control.show_note(call.session, note_id)

    def usage(self, call: Call, note_id: str) -> dict[str, Any]:
        """Where a note was used (as in show_item)."""
        self._settle_usage()
        return {"usage": memory_control.show_note(call.session, note_id).get("usage", [])}

    def _settle_usage(self) -> None:
        if self.usage_records is not None:
            self.usage_records.flush(SETTLE_SECONDS)

    def patch_item(self, call: Call, note_id: str, body: models.ItemPatch) -> dict[str, Any]:
        """A new version (text) or a scope change."""
        if body.text is None and body.scope is None:
            raise InvalidInput("Send text, scope or both.")
        new_id = memory_control.edit_note(call.session, note_id, text=body.text, scope=body.scope)
        return memory_control.show_note(call.session, new_id)

    def delete_item(self, call: Call, note_id: str, body: models.ItemDelete) -> dict[str, Any]:
        """Close a note's interval; the record stays (C2)."""
        memory_control.delete_note(call.session, note_id, body.reason)
        return {"item_id": note_id, "deleted": True}

    # ---- candidates ----------------------------------------------------------------------

    def candidates(self, call: Call, status: str | None) -> dict[str, Any]:
        """The person's candidates."""
        return {"candidates": candidates.list_candidates(call.session, status)}

    def decide(self, call: Call, candidate_id: str, body: models.Decision) -> dict[str, Any]:
        """Approve or reject the revision the reviewer saw (P6)."""
        if body.decision == "approve":
            return candidates.approve(
                call.session, candidate_id, body.revision, apply_now=body.apply
            )
        if body.reason is None:
            raise InvalidInput("Say why in 'reason' when rejecting.")
        return candidates.reject(call.session, candidate_id, body.revision, body.reason)

    def apply(self, call: Call, candidate_id: str) -> dict[str, Any]:
        """Turn an approved candidate into a note."""
        return candidates.apply(call.session, candidate_id)


def _person(people: list[str]) -> str:
    """The person the trusted header names, sent once."""
    if len(people) > 1:
        raise InvalidInput(f"Send {PERSON_HEADER} once.")
    person = people[0].strip() if people else ""
    if not person:
        raise InvalidInput(
            f"Say whose memory this is in the {PERSON_HEADER} header, from trusted server code."
        )
    return person


def _turn(call: Call, body: models.TurnRequest) -> context.Attribution:
    """The header's person in the named conversation; the runtime checks they take part."""
    return context.Attribution(call.session.person, ConversationId(body.conversation))


def _key(note: Any) -> tuple[int, str]:
    return int(note.created_seq), str(note.id)


def encode_cursor(seq: int, note: str) -> str:
    """A keyset cursor: the last note shown."""
    return base64.urlsafe_b64encode(f"k:{seq}:{note}".encode()).decode()


def decode_cursor(value: str | None) -> tuple[int, str] | None:
    """The (created_seq, id) a cursor names; a cursor not given out here is refused."""
    if not value:
        return None
    try:
        matched = _CURSOR.match(base64.urlsafe_b64decode(value.encode("ascii")).decode())
    except (ValueError, binascii.Error, UnicodeError):
        matched = None
    if matched is None:
        raise InvalidInput("That cursor is not one this API gave out.")
    return int(matched[1]), matched[2]
