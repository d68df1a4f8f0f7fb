"""`engram import FILE`: conversations from a JSONL transcript, all or nothing.

One JSON object per line:

    {"type": "conversation", "participants": ["maya"], "surface": "chat",
     "incognito": false, "agent": "helper"}
    {"type": "turn", "role": "user", "author": "maya", "text": "Hello",
     "status": "committed"}
    {"type": "tool", "name": "weather", "args": {"city": "Oslo"}, "result": "3°C"}

A "conversation" line starts a conversation; the turns and tool calls after it belong to
it. "surface", "incognito", "agent" and "status" are optional. Blank lines are skipped.
Every line is checked before anything is written, and everything is written in one
transaction: a malformed line names its number and nothing is imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engram.model.conversation import EntryKind, Surface, TurnStatus
from engram.model.errors import InvalidInput
from engram.model.ids import ConversationId, PersonId, new_call_id, new_turn_id, person_id
from engram.model.progress import Progress
from engram.runtime.conversations import MAX_TURN_CHARS
from engram.store import conversation_log, journal
from engram.store.store import Store

MAX_LINES = 200_000


@dataclass
class _Conversation:
    participants: list[PersonId]
    surface: Surface
    incognito: bool
    agent: str | None
    items: list[dict[str, Any]] = field(default_factory=list)


def _fail(number: int, message: str) -> InvalidInput:
    return InvalidInput(f"Line {number}: {message}; nothing was imported.")


def _text(record: dict[str, Any], key: str, number: int) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value:
        raise _fail(number, f"{key!r} must be a non-empty string")
    if len(value) > MAX_TURN_CHARS:
        raise _fail(number, f"{key!r} is longer than {MAX_TURN_CHARS:,} characters")
    return value


def parse(lines: Iterable[str]) -> list[_Conversation]:
    """Check every line; InvalidInput names the first bad one."""
    conversations: list[_Conversation] = []
    for number, line in enumerate(lines, start=1):
        if number > MAX_LINES:
            raise InvalidInput(f"The file has more than {MAX_LINES:,} lines; split it.")
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise _fail(number, f"not valid JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise _fail(number, "each line must be a JSON object")
        kind = record.get("type")
        if kind == "conversation":
            people = record.get("participants")
            if not isinstance(people, list) or not people:
                raise _fail(number, "'participants' must be a non-empty list of person ids")
            try:
                participants = [person_id(str(p)) for p in people]
                surface = Surface(record.get("surface", "chat"))
            except (InvalidInput, ValueError) as error:
                raise _fail(number, str(error).rstrip(".")) from None
            conversations.append(
                _Conversation(
                    participants, surface, bool(record.get("incognito", False)), record.get("agent")
                )
            )
            continue
        if not conversations:
            raise _fail(number, "a 'conversation' line must come first")
        current = conversations[-1]
        if kind == "turn":
            role = record.get("role")
            if role not in ("user", "assistant"):
                raise _fail(number, "'role' must be user or assistant")
            author = _text(record, "author", number)
            if role == "user" and author not in current.participants:
                raise _fail(number, f"{author!r} is not a participant of this conversation")
            status = record.get("status", TurnStatus.COMMITTED.value)
            if status not in {s.value for s in TurnStatus}:
                raise _fail(number, f"{status!r} is not a turn status")
            current.items.append(
                {
                    "kind": role,
                    "author": author,
                    "status": status,
                    "text": _text(record, "text", number),
                }
            )
        elif kind == "tool":
            args = record.get("args", {})
            current.items.append(
                {
                    "kind": "tool",
                    "name": _text(record, "name", number),
                    "args": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
                    "result": _text(record, "result", number),
                }
            )
        else:
            raise _fail(number, "'type' must be conversation, turn or tool")
    if not conversations:
        raise InvalidInput("The file holds no conversation; nothing was imported.")
    return conversations


def import_transcript(
    store: Store, lines: Iterable[str], progress: Progress | None = None
) -> list[ConversationId]:
    """Import every conversation in one transaction; returns their new ids."""
    parsed = parse(lines)
    created: list[ConversationId] = []
    with store.write() as txn:
        for done, conversation in enumerate(parsed, start=1):
            for person in conversation.participants:
                journal.ensure_person(store, txn, person)
            info = conversation_log.create(
                store,
                txn,
                conversation.participants,
                surface=conversation.surface,
                incognito=conversation.incognito,
                agent=conversation.agent,
            )
            for item in conversation.items:
                if item["kind"] == "tool":
                    call = new_call_id()
                    conversation_log.append_entry(
                        store,
                        txn,
                        info.id,
                        EntryKind.TOOL_CALL,
                        ref=call,
                        author="assistant",
                        body={"name": item["name"]},
                        text=item["args"],
                    )
                    conversation_log.append_entry(
                        store,
                        txn,
                        info.id,
                        EntryKind.TOOL_RESULT,
                        ref=call,
                        author="assistant",
                        status="ok",
                        body={"name": item["name"]},
                        text=item["result"],
                    )
                else:
                    conversation_log.append_entry(
                        store,
                        txn,
                        info.id,
                        EntryKind(item["kind"]),
                        ref=new_turn_id(),
                        author=item["author"],
                        status=item["status"],
                        text=item["text"],
                    )
            created.append(info.id)
            if progress:
                progress(done, len(parsed))
    return created
