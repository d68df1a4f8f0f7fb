"""Conversation writes a retried request may repeat: starting a conversation, appending a
turn, recording a tool call — each with an optional idempotency key.

A host that retries a request after a timeout must not record a turn twice. The key never
reaches the store: the id of what a keyed write records is derived from the key by the
store's keyed hash (`Store.hidden_name`), so a retry finds the first write by that id
through the log's own index, inside the same write transaction that would otherwise
append — two retries racing each other wait on the conversation's chain lock, and the
second finds the first. Nothing else is kept: whether a retry asks for the same thing is
decided by comparing it with what was written (its clear header, and its sealed text,
opened for the comparison). A key is scoped to its conversation (for a start: to the
person and agent), and deleting the conversation deletes what it found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engram.model.conversation import ConversationInfo, EntryKind, LogEntry, Surface, TurnStatus
from engram.model.errors import EngramError, InvalidInput
from engram.model.ids import CallId, ConversationId, PersonId, new_call_id, new_turn_id
from engram.runtime.conversations import (
    ConversationGone,
    append_tool_call,
    check_speaker,
    check_tool_call,
    check_turn,
    no_such_conversation,
)
from engram.store import conversation_log, journal
from engram.store.store import Store, WriteTxn

MAX_KEY_CHARS = 200
_KEY = re.compile(rf"[\x21-\x7e]{{1,{MAX_KEY_CHARS}}}")  # visible ASCII, as a header carries


class ReusedKey(EngramError):
    """An idempotency key came back with a different request."""


@dataclass(frozen=True, slots=True)
class Written:
    """What a write recorded, or found already recorded under its key."""

    entry: LogEntry  # the turn, or the tool call (its result follows it in the log)
    replayed: bool


@dataclass(frozen=True, slots=True)
class Started:
    """A conversation a request started, or found already started under its key."""

    info: ConversationInfo
    replayed: bool


def check_key(key: str | None) -> str | None:
    """The key as given, or a one-sentence refusal of one that could not be a key."""
    if key is not None and not _KEY.fullmatch(key):
        raise InvalidInput(
            f"Nothing was written: an Idempotency-Key holds 1 to {MAX_KEY_CHARS} visible "
            "ASCII characters and no spaces — send a UUID, say."
        )
    return key


def _derived(store: Store, key: str | None, prefix: str, *scope: str) -> str | None:
    """The id a keyed write records under (None without a key): as long as a random id,
    and only this store can tell which key it came from."""
    if check_key(key) is None:
        return None
    return prefix + store.hidden_name("|".join(("idempotency", *scope, str(key))))[:12]


def _reused(what: str) -> ReusedKey:
    return ReusedKey(
        f"This idempotency key already recorded a different {what}; send the same request "
        "to retry it, or a new key for a new one."
    )


def start_conversation(
    store: Store,
    key: str | None,
    participants: Sequence[PersonId],
    *,
    surface: Surface,
    incognito: bool,
    agent: str,
) -> Started:
    """Start a conversation (participants[0] is the person asking); with a key, a retry
    finds the conversation the first request started."""
    people = tuple(dict.fromkeys(participants))
    if not people:
        raise InvalidInput("A conversation needs at least one participant.")
    person = people[0]
    derived = _derived(store, key, "c_", "conversation", agent, person)
    conversation = None if derived is None else ConversationId(derived)
    with store.write() as txn:
        if conversation is not None:
            conversation_log.lock_log(txn, conversation)
            found = conversation_log.get(txn.conn, conversation)
            if found is not None:
                same = (set(found.participants), found.surface, found.incognito, found.agent)
                if same != (set(people), surface, incognito, agent):
                    raise _reused("conversation")
                return Started(found, replayed=True)
            if conversation_log.was_erased(store, txn.conn, conversation):
                raise ConversationGone(
                    f"This idempotency key started conversation {conversation}, which was "
                    "deleted since; use a new key to start another."
                )
        for someone in people:
            journal.ensure_person(store, txn, someone)
        info = conversation_log.create(
            store,
            txn,
            people,
            surface=surface,
            incognito=incognito,
            agent=agent,
            conversation=conversation,
        )
    return Started(info, replayed=False)


def _holding(txn: WriteTxn, conversation: ConversationId) -> ConversationInfo:
    """The conversation, its log held still until the write ends."""
    conversation_log.lock_log(txn, conversation)
    info = conversation_log.get(txn.conn, conversation)
    if info is None:
        raise no_such_conversation(conversation)
    return info


def _text_of(store: Store, txn: WriteTxn, entry: LogEntry) -> str | None:
    return conversation_log.entry_texts(store, txn.conn, entry.conversation, [entry.seq])[entry.seq]


def append_turn(
    store: Store,
    conversation: ConversationId,
    key: str | None,
    *,
    role: str,
    author: str,
    text: str,
    status: TurnStatus,
) -> Written:
    """Append a turn; with a key, a retry gets the turn the first request appended."""
    kind = check_turn(role, text)
    ref = _derived(store, key, "t_", "turn", conversation) or new_turn_id()
    with store.write() as txn:
        check_speaker(_holding(txn, conversation), kind, author)
        found = conversation_log.entries_by_ref(txn.conn, conversation, ref)
        if found:
            first = found[0]
            same = (first.kind, first.author, first.status) == (kind, author, status.value)
            # A text removed since (its author erased) cannot be compared: refused, since
            # recording it again would undo the removal.
            if not same or _text_of(store, txn, first) != text:
                raise _reused("turn")
            return Written(first, replayed=True)
        entry = conversation_log.append_entry(
            store, txn, conversation, kind, ref=ref, author=author, status=status.value, text=text
        )
    return Written(entry, replayed=False)


def record_tool_call(
    store: Store,
    conversation: ConversationId,
    key: str | None,
    *,
    name: str,
    arguments: str,
    result: str,
    author: str,
    status: str,
) -> Written:
    """Record a tool call and its result; with a key, a retry gets the first call."""
    check_tool_call(name, arguments, result)
    call = CallId(_derived(store, key, "k_", "call", conversation) or new_call_id())
    with store.write() as txn:
        _holding(txn, conversation)
        found = conversation_log.entries_by_ref(txn.conn, conversation, call)
        if found:
            calls = [e for e in found if e.kind is EntryKind.TOOL_CALL]
            results = [e for e in found if e.kind is EntryKind.TOOL_RESULT]
            if not calls or not results:
                raise _reused("tool call")
            sent = (name, author, status, arguments, result)
            kept = (
                calls[0].body.get("name"),
                calls[0].author,
                results[0].status,
                _text_of(store, txn, calls[0]),
                _text_of(store, txn, results[0]),
            )
            if sent != kept:
                raise _reused("tool call")
            return Written(calls[0], replayed=True)
        entry = append_tool_call(
            store, txn, conversation, call, name, arguments, result, author=author, status=status
        )
    return Written(entry, replayed=False)
