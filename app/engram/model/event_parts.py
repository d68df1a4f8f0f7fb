"""The parts of a journal event its body is built from: the event's type and its cause.

They live apart from `events` so the body catalogue (`event_bodies`) and the events that
carry its bodies can both use them without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from engram.model.ids import ConversationId, TurnId


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
    # An offline review (issue 21): where a review copy came from (in the copy), and what
    # became of each of the reviewer's decisions (in the live store). Audit only.
    REVIEW_COPY_MADE = "review_copy_made"
    REVIEW_IMPORTED = "review_imported"


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
