"""A conversation's signed log as an agent framework's session: items in, the same items
out (runtime/response_items.py says how an item splits).

- `append_items`: in one write, each item's visible text as the turn or tool entry every
  reader knows (a user turn authored by the host's person, never by anything in the item:
  P3), then its sealed envelope as an `item` entry naming that entry. A tool result joins
  the call it answers (by the framework's call id), so the history tools pair them.
- `read_items`: the items back, oldest first; a tool result staff removed comes back with
  a removal notice in its place (H4).
- `withdraw_last`: the log is append-only and signed, so taking back the latest item
  (a session's `pop_item`) is an excision: its payloads are deleted and a signed excision
  entry records it; the chain still verifies, readers (history, learning, the inspector)
  no longer see the text, and the session no longer returns the item.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engram.model.conversation import ConversationInfo, EntryKind, LogEntry, TurnStatus
from engram.model.errors import InvalidInput, NotAllowed, damaged
from engram.model.ids import ConversationId, PersonId, TurnId, new_call_id, new_turn_id
from engram.runtime.conversations import (
    MAX_TURN_CHARS,
    no_such_conversation,
    require_conversation,
    start_conversation,
)
from engram.runtime.response_items import SplitItem, join_item, split_item
from engram.store import conversation_log, pending_erasure
from engram.store.store import Store, WriteTxn

log = logging.getLogger(__name__)

FORMAT = "openai-responses"
MAX_ITEMS = 1_000  # in one call: a session adds one run step's items at a time
MAX_ENVELOPE_CHARS = 2 * MAX_TURN_CHARS
TOOL_AUTHOR = "assistant"  # who the log names for tool entries, as record_tool_call does
WITHDRAW_WAIT_S = 2.0  # how long taking an item back waits to finish erasing its bytes


@dataclass(frozen=True, slots=True)
class SessionParty:
    """Who the items are attributed to: the host's person (the user's turns) and the agent
    (the assistant's), fixed by the host when the session was made (P3)."""

    person: PersonId
    agent: str


def _check_size(split: SplitItem) -> None:
    if len(split.text) > MAX_TURN_CHARS:
        raise InvalidInput(
            f"A session item holds {len(split.text):,} characters of text; the most one turn "
            f"or tool result may hold is {MAX_TURN_CHARS:,}, so nothing was written."
        )
    size = len(json.dumps(split.whole, ensure_ascii=False))
    if size > MAX_ENVELOPE_CHARS:
        raise InvalidInput(
            f"A session item is {size:,} characters long; at most "
            f"{MAX_ENVELOPE_CHARS:,} can be kept, so nothing was written."
        )


def append_items(
    store: Store,
    conversation: ConversationId,
    party: SessionParty,
    items: Sequence[Mapping[str, Any]],
) -> None:
    """Record a session's new items, all or nothing."""
    if len(items) > MAX_ITEMS:
        raise InvalidInput(f"At most {MAX_ITEMS:,} items can be added at once.")
    splits = [split_item(item) for item in items]  # every item is checked before a write
    for split in splits:
        _check_size(split)
    info = require_conversation(store, conversation)
    if party.person not in info.participants:
        raise NotAllowed(
            f"{party.person!r} is not a participant of conversation {conversation}; only "
            "participants speak as the user."
        )
    with store.write() as txn:
        if conversation_log.get(txn.conn, conversation) is None:
            raise no_such_conversation(conversation)  # deleted since the check above
        # Only a result answering a call from an earlier batch needs the log's open calls.
        made = {s.call_id for s in splits if s.kind is EntryKind.TOOL_CALL}
        answers_earlier = any(
            s.kind is EntryKind.TOOL_RESULT and s.call_id not in made for s in splits
        )
        calls = _open_calls(store, txn.conn, conversation) if answers_earlier else {}
        for split in splits:
            primary = _primary(store, txn, conversation, party, split, calls)
            body: dict[str, Any] = {"format": FORMAT, "type": split.item_type}
            envelope = {"item": split.whole, "holes": []}  # no entry holds any of its text
            if primary is not None:
                body["of"], envelope = primary.seq, split.envelope
            conversation_log.append_entry(
                store,
                txn,
                conversation,
                EntryKind.ITEM,
                ref=primary.ref if primary is not None else None,
                author=primary.author if primary is not None else party.agent,
                body=body,
                text=json.dumps(envelope, ensure_ascii=False),
            )


def _primary(
    store: Store,
    txn: WriteTxn,
    conversation: ConversationId,
    party: SessionParty,
    split: SplitItem,
    calls: dict[str, tuple[str, str]],
) -> LogEntry | None:
    """The turn or tool entry holding an item's visible text, or None for an item Engram
    does not read (reasoning, a system message, a hosted tool's call)."""
    committed = TurnStatus.COMMITTED.value
    ref: str
    author: str
    status: str | None
    body: dict[str, Any] | None
    if split.kind is EntryKind.USER:
        ref, author, status, body = new_turn_id(), party.person, committed, None
    elif split.kind is EntryKind.ASSISTANT:
        ref, author, status, body = new_turn_id(), party.agent, committed, None
    elif split.kind is EntryKind.TOOL_CALL and split.tool is not None:
        ref, author, status, body = new_call_id(), TOOL_AUTHOR, None, {"name": split.tool}
        if split.call_id is not None:
            calls[split.call_id] = (ref, split.tool)
    elif split.kind is EntryKind.TOOL_RESULT and split.call_id in calls:
        ref, tool = calls.pop(str(split.call_id))
        author, status, body = TOOL_AUTHOR, "ok", {"name": tool}
    else:
        return None  # a result whose call this log does not hold stays in its envelope
    return conversation_log.append_entry(
        store,
        txn,
        conversation,
        split.kind,
        ref=ref,
        author=author,
        status=status,
        body=body,
        text=split.text,
    )


def _open_calls(
    store: Store, conn: Any, conversation: ConversationId
) -> dict[str, tuple[str, str]]:
    """The framework's call id -> (Engram call id, tool name) of every recorded call that
    has no result yet (a run can stop between a call and its result)."""
    entries = conversation_log.entries(conn, conversation)
    answered = {e.ref for e in entries if e.kind is EntryKind.TOOL_RESULT}
    open_calls = {
        e.seq: e for e in entries if e.kind is EntryKind.TOOL_CALL and e.ref not in answered
    }
    envelopes = [e for e in entries if e.kind is EntryKind.ITEM and e.body.get("of") in open_calls]
    texts = conversation_log.entry_texts(store, conn, conversation, [e.seq for e in envelopes])
    found: dict[str, tuple[str, str]] = {}
    for entry in envelopes:
        text = texts.get(entry.seq)
        if text is None:
            continue
        call_id = json.loads(text)["item"].get("call_id")
        call = open_calls[int(entry.body["of"])]
        if call_id is not None:
            found[str(call_id)] = (str(call.ref), str(call.body.get("name")))
    return found


def _live_items(entries: Sequence[LogEntry]) -> list[LogEntry]:
    """The item entries not taken back, in order (an excision's list of removed entries is
    in clear, so this needs no decryption)."""
    removed = {
        int(seq) for e in entries if e.kind is EntryKind.EXCISION for seq in e.body["excised"]
    }
    return [e for e in entries if e.kind is EntryKind.ITEM and e.seq not in removed]


def _rebuilt(
    store: Store, conn: Any, conversation: ConversationId, chosen: Sequence[LogEntry]
) -> list[dict[str, Any]]:
    primaries = [int(e.body["of"]) for e in chosen if "of" in e.body]
    texts = conversation_log.entry_texts(
        store, conn, conversation, [e.seq for e in chosen] + primaries
    )
    items = []
    for entry in chosen:
        envelope = texts.get(entry.seq)
        if envelope is None:
            # its key is gone (the conversation is being deleted): nothing to give back
            raise damaged(f"The store is damaged: conversation {conversation}'s items do not open")
        of = entry.body.get("of")
        items.append(join_item(json.loads(envelope), texts.get(int(of)) if of else ""))
    return items


def read_items(
    store: Store, conversation: ConversationId, limit: int | None = None
) -> list[dict[str, Any]]:
    """The session's items, oldest first; with `limit`, only the latest that many."""
    if limit is not None and limit <= 0:
        return []
    with store.read() as conn:
        if conversation_log.get(conn, conversation) is None:
            raise no_such_conversation(conversation)
        live = _live_items(conversation_log.entries(conn, conversation))
        chosen = live[-limit:] if limit is not None else live
        return _rebuilt(store, conn, conversation, chosen)


def withdraw_last(
    store: Store, conversation: ConversationId, actor: str, reason: str
) -> dict[str, Any] | None:
    """Take back the latest item (excising its text and envelope); returns it, or None
    when the session holds none."""
    with store.write() as txn:
        entries = conversation_log.entries(txn.conn, conversation)
        if not entries:
            raise no_such_conversation(conversation)
        live = _live_items(entries)
        if not live:
            return None
        last = live[-1]
        (item,) = _rebuilt(store, txn.conn, conversation, [last])
        seqs = [last.seq]
        body: dict[str, Any] = {"withdrawn": FORMAT}
        of = last.body.get("of")
        if of is not None:
            seqs.insert(0, int(of))
            primary = next(e for e in entries if e.seq == int(of))
            if primary.kind is EntryKind.TOOL_RESULT:
                body["call"] = primary.ref  # the inspector names the tool whose result went
        conversation_log.excise(store, txn, conversation, seqs, actor, reason, body=body)
    finished = pending_erasure.finish(store, wait_s=WITHDRAW_WAIT_S)
    if not finished.done:
        # The item is gone from the session and from every reader; only its old bytes may
        # linger in the files until the store is next opened (verify reports it until then).
        log.warning("item withdrawn from %s; erasing its bytes finishes later", conversation)
    return item


def last_user_turn(store: Store, conversation: ConversationId) -> TurnId | None:
    """The latest user turn of a conversation (what a block is assembled for), if any."""
    with store.read() as conn:
        entries = conversation_log.entries(conn, conversation)
    turn = next((e for e in reversed(entries) if e.kind is EntryKind.USER), None)
    return TurnId(str(turn.ref)) if turn is not None else None


def fresh_conversation(store: Store, info: ConversationInfo) -> ConversationInfo:
    """A new conversation like `info` (same people, surface, agent, incognito), for a
    session that starts over; the old one stays as it was, in the person's history."""
    return start_conversation(
        store, info.participants, surface=info.surface, incognito=info.incognito, agent=info.agent
    )
