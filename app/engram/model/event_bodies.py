"""The catalogue of journal event bodies: one frozen class per event type (issue 18 item 10).

A body is typed everywhere but at the store's seam: the journal encodes it with `to_json`
when it appends and decodes the stored JSON with `decode_body` when it reads. The JSON is
the on-disk format the chain hashes and signs, so each `to_json` writes exactly the keys
the writers always wrote (an absent optional key stays absent), and `from_json` reads the
older variants still on disk too (tests/unit/test_event_bodies_known_answers.py pins both).
The classes live in `note_bodies` and `record_bodies`; this module is where every event
type finds its class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from engram.model.event_body_base import EventBody
from engram.model.event_parts import EventType
from engram.model.ids import CandidateId
from engram.model.note_bodies import (
    Closed,
    Contradicted,
    ConversationDeleted,
    Corrected,
    Deleted,
    DuplicateRemoved,
    Merged,
    NoteAdded,
    Reopened,
    Restated,
    Retired,
    ScopeChanged,
    Undone,
)
from engram.model.record_bodies import (
    BlockSeen,
    CandidateApplied,
    CandidateReviewed,
    CandidateSuggested,
    DigestLineAdded,
    DroppedItem,
    Exported,
    ExtractionCheckpoint,
    ItemUsed,
    PersonCreated,
    PlacedNote,
    ProfileRebuilt,
)
from engram.model.review_bodies import ReviewCopyMade, ReviewImported

__all__ = [
    "BODY_CLASSES",
    "BlockSeen",
    "CandidateApplied",
    "CandidateReviewed",
    "CandidateSuggested",
    "Closed",
    "Contradicted",
    "ConversationDeleted",
    "Corrected",
    "Deleted",
    "DigestLineAdded",
    "DroppedItem",
    "DuplicateRemoved",
    "EventBody",
    "Exported",
    "ExtractionCheckpoint",
    "ItemUsed",
    "Merged",
    "NoteAdded",
    "PersonCreated",
    "PlacedNote",
    "ProfileRebuilt",
    "Reopened",
    "Restated",
    "Retired",
    "ReviewCopyMade",
    "ReviewImported",
    "ScopeChanged",
    "Undone",
    "body_as",
    "candidate_named",
    "decode_body",
]

BODY_CLASSES: dict[EventType, type[EventBody]] = {
    EventType.NOTE_ADDED: NoteAdded,
    EventType.RESTATED: Restated,
    EventType.CONTRADICTED: Contradicted,
    EventType.CORRECTED: Corrected,
    EventType.SCOPE_CHANGED: ScopeChanged,
    EventType.DELETED: Deleted,
    EventType.MERGED: Merged,
    EventType.RETIRED: Retired,
    EventType.DUPLICATE_REMOVED: DuplicateRemoved,
    EventType.PROFILE_REBUILT: ProfileRebuilt,
    EventType.DIGEST_LINE_ADDED: DigestLineAdded,
    EventType.CONVERSATION_DELETED: ConversationDeleted,
    EventType.CANDIDATE_SUGGESTED: CandidateSuggested,
    EventType.CANDIDATE_REVIEWED: CandidateReviewed,
    EventType.CANDIDATE_APPLIED: CandidateApplied,
    EventType.EXTRACTION_CHECKPOINT: ExtractionCheckpoint,
    EventType.ITEM_USED: ItemUsed,
    EventType.PERSON_CREATED: PersonCreated,
    EventType.REOPENED: Reopened,
    EventType.UNDONE: Undone,
    EventType.EXPORTED: Exported,
    EventType.REVIEW_COPY_MADE: ReviewCopyMade,
    EventType.REVIEW_IMPORTED: ReviewImported,
}

B = TypeVar("B", bound=EventBody)


def decode_body(type_: EventType, data: Mapping[str, Any]) -> EventBody:
    """The typed body of a stored event of this type."""
    return BODY_CLASSES[type_].from_json(data)


def body_as(body: EventBody, cls: type[B]) -> B:
    """`body`, known to be a `cls` (the event's type says so; events check it when made)."""
    if not isinstance(body, cls):
        raise TypeError(f"expected a {cls.__name__} body, not {type(body).__name__}")
    return body


def candidate_named(body: EventBody) -> CandidateId | None:
    """The candidate a suggestion, review, application, imported offline decision or undone
    decision names (None for other events)."""
    if isinstance(body, CandidateSuggested | CandidateReviewed | CandidateApplied):
        return body.candidate
    if isinstance(body, ReviewImported):  # an offline reviewer's decision on it came back
        return body.candidate
    if isinstance(body, Undone):  # a decision on it undone (issue 21 item 8), or None
        return body.candidate
    return None


def shreds_text(body: EventBody) -> bool:
    """Whether an event with this body removed note texts from the journal's payloads: a
    conversation deleted (C4) or a note forgotten (issue 21 item 7). Whatever held those
    texts in memory must read them again."""
    if isinstance(body, ConversationDeleted):
        return True
    return isinstance(body, Deleted) and bool(body.shredded)
