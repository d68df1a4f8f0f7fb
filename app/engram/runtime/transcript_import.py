"""`engram import FILE`: conversations from a JSONL transcript, all or nothing.

One JSON object per line:

    {"type": "conversation", "participants": ["maya"], "surface": "chat",
     "incognito": false, "agent": "helper"}
    {"type": "turn", "role": "user", "author": "maya", "text": "Hello",
     "status": "committed"}
    {"type": "tool", "name": "weather", "args": {"city": "Oslo"}, "result": "3°C"}

A "conversation" line starts a conversation; the turns and tool calls after it belong to
it. "surface", "incognito", "agent" and "status" are optional. Blank lines are skipped.
Each line is checked against its declared model (`model.wire`): strict types, no unknown
fields, bounded nesting and numbers. Every line is checked before anything is written, and
everything is written in one transaction: a bad line is named by its number, in one
sentence, and nothing is imported. Lines end at line feeds only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engram.model.agents import AGENT_NAME
from engram.model.conversation import EntryKind, Surface
from engram.model.errors import InvalidInput
from engram.model.ids import ConversationId, PersonId, new_call_id, new_turn_id, person_id
from engram.model.progress import Progress
from engram.model.wire import (
    TRANSCRIPT_LINE,
    ConversationLine,
    ToolLine,
    TurnLine,
    WireError,
    parse_json,
    without_bom,
)
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


def split_lines(text: str) -> list[str]:
    """The file's lines: split at line feeds only (a CR before one is dropped), so a U+2028
    or U+2029 inside a JSON string stays inside its line, as JSON allows."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _conversation(line: ConversationLine, number: int) -> _Conversation:
    try:
        participants = [person_id(p) for p in line.participants]
    except InvalidInput as error:
        raise _fail(number, str(error).rstrip(".")) from None
    if line.agent is not None and not AGENT_NAME.fullmatch(line.agent):
        raise _fail(number, f"{line.agent!r} is not an agent name (letters, digits and . _ : -)")
    return _Conversation(participants, line.surface, line.incognito, line.agent)


def parse(lines: Iterable[str]) -> list[_Conversation]:
    """Check every line against its declared shape (model.wire); InvalidInput names the
    first bad one by number. Nothing is coerced: "false" is not false."""
    conversations: list[_Conversation] = []
    for number, line in enumerate(lines, start=1):
        if number == 1:
            line = without_bom(line)  # as import-legacy does: a BOM starts the file, no line
        if number > MAX_LINES:
            raise InvalidInput(f"The file has more than {MAX_LINES:,} lines; split it.")
        if not line.strip():
            continue
        try:
            record = parse_json(TRANSCRIPT_LINE, line)
        except WireError as error:
            raise _fail(number, str(error)) from None
        if isinstance(record, ConversationLine):
            conversations.append(_conversation(record, number))
            continue
        if not conversations:
            raise _fail(number, "a 'conversation' line must come first")
        current = conversations[-1]
        if isinstance(record, TurnLine):
            if record.role == "user" and record.author not in current.participants:
                raise _fail(number, f"{record.author!r} is not a participant of this conversation")
            current.items.append(
                {
                    "kind": record.role,
                    "author": record.author,
                    "status": record.status.value,
                    "text": record.text,
                }
            )
        elif isinstance(record, ToolLine):
            args = record.args
            current.items.append(
                {
                    "kind": "tool",
                    "name": record.name,
                    "args": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
                    "result": record.result,
                }
            )
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
