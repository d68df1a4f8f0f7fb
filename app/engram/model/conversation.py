"""Conversations and their signed logs, as value types."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from engram.model.ids import ConversationId, PersonId


class Surface(StrEnum):
    """Where a conversation happens; decides who can read it (S3) and what may learn (P4)."""

    CHAT = "chat"
    CHANNEL = "channel"
    TASK = "task"
    SCHEDULE = "schedule"


class EntryKind(StrEnum):
    """Kinds of conversation-log entries."""

    CREATED = "created"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    EXCISION = "excision"
    # An agent framework's item as its session gave it (sealed), with the visible text cut
    # out when a turn or tool entry before it holds that text (runtime/session_log.py).
    # Not a turn: never searched, never shown to learning (W8).
    ITEM = "item"
    # The host says the exchange so far is complete though no reply was logged (a host that
    # logs only the person's turns), so its user turns may be learned from (P4). No text.
    EXCHANGE_END = "exchange_end"


# Entries whose text history search looks at (while the text still exists, H5).
SEARCHABLE_KINDS = frozenset({EntryKind.USER, EntryKind.ASSISTANT, EntryKind.TOOL_RESULT})


class TurnStatus(StrEnum):
    """Where a turn stands (P4: only committed turns may teach anything)."""

    COMMITTED = "committed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    AWAITING_USER = "awaiting_user"


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    """A conversation's clear facts."""

    id: ConversationId
    created_at: datetime
    surface: Surface
    incognito: bool
    agent: str | None
    participants: tuple[PersonId, ...]


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One entry of a conversation's signed log (text read separately, on demand)."""

    conversation: ConversationId
    seq: int
    at: datetime
    kind: EntryKind
    ref: str | None
    author: str | None
    status: str | None
    body: Mapping[str, Any] = field(default_factory=dict)
    has_payload: bool = False
    entry_hash: bytes | None = None  # its link in the chain (None where not read)
