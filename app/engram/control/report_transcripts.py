"""Each conversation of the access report as kept: every turn and tool exchange, and where
a part was removed, a marker saying so, by whom, when and why — never a silent gap.

Messages are numbered within their conversation ("message 3"), so notes can say which
turn they were learned from or disclosed in without an id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any

from engram.control.report_document import Block
from engram.control.report_words import (
    actor_words,
    agent_words,
    local_day,
    local_time,
    readers_words,
)
from engram.engine.scope import audience_for
from engram.model.conversation import ConversationInfo, EntryKind, LogEntry
from engram.model.ids import PersonId
from engram.store import conversation_log
from engram.store.store import Store

_SHOWN = (EntryKind.USER, EntryKind.ASSISTANT, EntryKind.TOOL_CALL, EntryKind.TOOL_RESULT)


@dataclass
class Conversations:
    """What the notes' sections need to name a conversation and its turns in words."""

    infos: dict[str, ConversationInfo] = field(default_factory=dict)
    number: dict[str, int] = field(default_factory=dict)  # conversation → its report number
    message: dict[tuple[str, str], int] = field(default_factory=dict)  # (conv, turn) → n

    def name(self, conversation: str | None, zone: tzinfo | None) -> str:
        """ "conversation 2 (31 Oct 2026, with the agent 'helper')"."""
        info = self.infos.get(conversation or "")
        if info is None:
            return "a conversation no longer kept"
        return (
            f"conversation {self.number[info.id]} ({local_day(info.created_at, zone)}, "
            f"with {agent_words(info.agent)})"
        )

    def turn(self, conversation: str | None, turn: str | None, zone: tzinfo | None) -> str:
        """ "message 3 of conversation 2 (…)", or the conversation alone."""
        where = self.name(conversation, zone)
        n = self.message.get((conversation or "", turn or ""))
        return f"message {n} of {where}" if n else where


def transcript(
    store: Store,
    conn: Any,
    info: ConversationInfo,
    number: int,
    person: PersonId,
    zone: tzinfo | None,
    known: Conversations,
) -> list[Block]:
    """The conversation's heading block and one block per entry, as kept."""
    entries = conversation_log.entries(conn, info.id)
    texts = conversation_log.entry_texts(
        store, conn, info.id, [e.seq for e in entries if e.has_payload]
    )
    removed = _removals(entries)
    audience = audience_for(person, info).kind
    facts = [
        ("Started", local_time(info.created_at, zone)),
        ("Agent", agent_words(info.agent)),
        ("People in it", ", ".join(actor_words(p, person) for p in info.participants)),
        ("Who could read its answers", readers_words(info, person, audience)),
        ("Where", info.surface.value),
    ]
    if info.incognito:
        facts.append(("Incognito", "yes: nothing was learned from it"))
    blocks = [Block(f"Conversation {number}", tuple(facts), tone="note")]
    said = 0
    for entry in entries:
        if entry.kind not in _SHOWN:
            continue  # the log's own bookkeeping (creation, excision records, framework items)
        if entry.kind in (EntryKind.USER, EntryKind.ASSISTANT) and entry.ref:
            said += 1
            known.message[(info.id, entry.ref)] = said
        blocks.append(
            _entry_block(entry, said, texts.get(entry.seq), removed, texts, info, person, zone)
        )
    if said == 0 and len(blocks) == 1:
        blocks.append(Block(lines=("No messages are kept in this conversation.",)))
    return blocks


def _removals(entries: list[LogEntry]) -> dict[int, LogEntry]:
    """For each removed entry, the excision entry that removed it (who, when; its text is
    the reason given)."""
    found: dict[int, LogEntry] = {}
    for entry in entries:
        if entry.kind is EntryKind.EXCISION:
            found.update((int(seq), entry) for seq in entry.body.get("excised", []))
    return found


def _entry_block(
    entry: LogEntry,
    number: int,
    text: str | None,
    removed: dict[int, LogEntry],
    reasons: dict[int, str | None],
    info: ConversationInfo,
    person: PersonId,
    zone: tzinfo | None,
) -> Block:
    when = local_time(entry.at, zone)
    who = _author(entry, info, person)
    if entry.kind is EntryKind.TOOL_CALL:
        heading = f"{when} · {who} used the tool '{entry.body.get('name', 'unnamed')}'"
    elif entry.kind is EntryKind.TOOL_RESULT:
        heading = f"{when} · what the tool '{entry.body.get('name', 'unnamed')}' answered"
    else:
        heading = f"Message {number} · {when} · {who}"
    if entry.seq in removed:
        excision = removed[entry.seq]
        sentence = _removed_sentence(excision, reasons.get(excision.seq), person, zone)
        return Block(heading, lines=(sentence,), tone="removed")
    if text is None:
        return Block(
            heading,
            lines=("[Removed: this part's text is no longer kept; its key was destroyed.]",),
            tone="removed",
        )
    return Block(heading, lines=(text,), tone="turn")


def _removed_sentence(
    excision: LogEntry, reason: str | None, person: PersonId, zone: tzinfo | None
) -> str:
    said = f" The reason given: “{reason.rstrip('.')}”." if reason else ""
    return (
        f"[Removed on {local_time(excision.at, zone)} by {actor_words(excision.author, person)}"
        f": the text of this part is no longer kept.{said}]"
    )


def _author(entry: LogEntry, info: ConversationInfo, person: PersonId) -> str:
    if entry.kind is EntryKind.USER:
        return actor_words(entry.author, person)
    return agent_words(info.agent)
