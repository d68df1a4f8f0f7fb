"""Journal events: one append-only journal per person, folded into notes.

An event's clear part (type, time, actor, cause, body) is chained and queryable; free text
(note text, reasons, profile, digest lines) travels beside it as a sealed payload, which the
fold never needs: notes point at the event whose payload holds their text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from engram.model.ids import ConversationId, PersonId, TurnId


class EventType(StrEnum):
    """Every kind of journal event (DESIGN.md, "Journals and the fold")."""

    NOTE_ADDED = "note_added"
    RESTATED = "restated"
    CONTRADICTED = "contradicted"
    CORRECTED = "corrected"
    SCOPE_CHANGED = "scope_changed"
    DELETED = "deleted"
    MERGED = "merged"
    RETIRED = "retired"
    DUPLICATE_REMOVED = "duplicate_removed"
    PROFILE_REBUILT = "profile_rebuilt"
    DIGEST_LINE_ADDED = "digest_line_added"
    CONVERSATION_DELETED = "conversation_deleted"
    CANDIDATE_SUGGESTED = "candidate_suggested"
    CANDIDATE_REVIEWED = "candidate_reviewed"
    CANDIDATE_APPLIED = "candidate_applied"
    EXTRACTION_CHECKPOINT = "extraction_checkpoint"
    ITEM_USED = "item_used"
    PERSON_CREATED = "person_created"
    REOPENED = "reopened"  # a contradiction undone: the newer note was deleted
    UNDONE = "undone"
    # A person's data left the store (a JSON export, an access report): who, when, what and
    # whether to a file or standard output; never the path or any content. Audit only.
    EXPORTED = "exported"


# Events whose sealed payload is the text of a note they create.
TEXT_BEARING = frozenset({EventType.NOTE_ADDED, EventType.CORRECTED})


@dataclass(frozen=True, slots=True)
class Cause:
    """Where an event came from: a conversation and, where one exists, its turn."""

    conversation: ConversationId
    turn: TurnId | None = None

    def to_json(self) -> dict[str, str | None]:
        """The JSON shape used in chained headers and CLI output."""
        return {"conversation": self.conversation, "turn": self.turn}


@dataclass(frozen=True, slots=True)
class Event:
    """One committed journal event, as the fold sees it (no free text)."""

    person: PersonId
    seq: int
    at: datetime
    actor: str
    type: EventType
    body: Mapping[str, Any] = field(default_factory=dict)
    cause: Cause | None = None
    has_payload: bool = False


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event about to be appended: the store gives it a seq, a time and a chain link.

    `text` is sealed; `text_origin` names the conversation whose key must also be held to
    read it (C4): note text learned in a conversation dies with that conversation.
    """

    type: EventType
    actor: str
    body: Mapping[str, Any] = field(default_factory=dict)
    cause: Cause | None = None
    text: str | None = None
    text_origin: ConversationId | None = None
