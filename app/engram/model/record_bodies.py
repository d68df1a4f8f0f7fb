"""Journal event bodies that record what is not a note's own change: the profile, digest
lines, candidates, extraction, usage, the person's creation and exports. One frozen class
per event type, catalogued in `event_bodies`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from engram.model.event_body_base import (
    EventBody,
    Json,
    cause_json,
    cause_of,
    note_ids,
    optional_note,
    present,
    put,
)
from engram.model.event_parts import Cause
from engram.model.ids import CandidateId, ConversationId, NoteId, TurnId
from engram.model.scope import AudienceKind, Durability, Kind, Scope


@dataclass(frozen=True, slots=True)
class ProfileRebuilt(EventBody):
    """M1: which notes make up the profile (its text is built from theirs when read)."""

    language: NoteId | None = None
    tone: NoteId | None = None
    preferences: tuple[NoteId, ...] = ()

    def to_json(self) -> Json:
        return {
            "language": self.language,
            "tone": self.tone,
            "preferences": list(self.preferences),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(
            optional_note(data, "language"),
            optional_note(data, "tone"),
            note_ids(data.get("preferences")),
        )

    def ids(self) -> tuple[NoteId, ...]:
        """Every note the profile names: language, tone, then the preferences."""
        return (*present(self.language, self.tone), *self.preferences)


@dataclass(frozen=True, slots=True)
class DigestLineAdded(EventBody):
    """M4: one conversation's digest line (its text is the sealed payload)."""

    conversation: ConversationId | None = None
    scope: Scope | None = None  # older lines have none: they read as unspecified

    def to_json(self) -> Json:
        return put(put({}, "conversation", self.conversation), "scope", self.scope)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        conversation, scope = data.get("conversation"), data.get("scope")
        return cls(
            ConversationId(conversation) if conversation else None,
            Scope(scope) if scope else None,
        )


@dataclass(frozen=True, slots=True)
class CandidateSuggested(EventBody):
    """P5: a note proposed for a person to decide on (its text and flags are sealed)."""

    candidate: CandidateId
    kind: Kind
    scope: Scope
    durability: Durability | None = None  # older suggestions: lasting
    confidence_bp: int | None = None  # older suggestions: 6,000
    extractor: str | None = None
    topic: str | None = None
    origin: ConversationId | None = None
    source: Cause | None = None
    restates: NoteId | None = None
    contradicts: NoteId | None = None
    as_note: NoteId | None = None  # the id the note takes when applied, if still free

    def to_json(self) -> Json:
        data: Json = {"candidate": self.candidate, "kind": self.kind.value}
        data["scope"] = self.scope.value
        put(data, "durability", self.durability)
        put(data, "confidence_bp", self.confidence_bp)
        put(data, "extractor", self.extractor)
        put(data, "topic", self.topic or None)
        put(data, "origin", self.origin)
        put(data, "source", cause_json(self.source))
        put(data, "restates", self.restates)
        put(data, "contradicts", self.contradicts)
        return put(data, "as_note", self.as_note)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        durability, bp, origin = (
            data.get("durability"),
            data.get("confidence_bp"),
            data.get("origin"),
        )
        return cls(
            CandidateId(data["candidate"]),
            Kind(data["kind"]),
            Scope(data["scope"]),
            Durability(durability) if durability else None,
            int(bp) if bp is not None else None,
            data.get("extractor"),
            data.get("topic") or None,
            ConversationId(origin) if origin else None,
            cause_of(data.get("source")),
            optional_note(data, "restates"),
            optional_note(data, "contradicts"),
            optional_note(data, "as_note"),
        )


@dataclass(frozen=True, slots=True)
class CandidateReviewed(EventBody):
    """P6: a decision on revision `revision` of a candidate ("approved", "rejected")."""

    candidate: CandidateId
    revision: int
    decision: str

    def to_json(self) -> Json:
        return {"candidate": self.candidate, "revision": self.revision, "decision": self.decision}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(CandidateId(data["candidate"]), int(data["revision"]), str(data["decision"]))


@dataclass(frozen=True, slots=True)
class CandidateApplied(EventBody):
    """An approved candidate became (or restated) `note`."""

    candidate: CandidateId
    note: NoteId

    def to_json(self) -> Json:
        return {"candidate": self.candidate, "note": self.note}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(CandidateId(data["candidate"]), NoteId(data["note"]))

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.note,)


@dataclass(frozen=True, slots=True)
class ExtractionCheckpoint(EventBody):
    """The turns of a conversation an extraction pass has read."""

    conversation: ConversationId
    turns: tuple[TurnId, ...] = ()

    def to_json(self) -> Json:
        return {"conversation": self.conversation, "turns": list(self.turns)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        turns = tuple(TurnId(t) for t in data.get("turns") or ())
        return cls(ConversationId(data["conversation"]), turns)


@dataclass(frozen=True, slots=True)
class PlacedNote:
    """A note a turn's block placed: its rank and its section."""

    note: NoteId
    rank: int
    section: str


@dataclass(frozen=True, slots=True)
class DroppedItem:
    """Something a turn's block left out, and why (a note, or a digest line by its event)."""

    what: str
    reason: str
    note: NoteId | None = None
    line: int | None = None

    def to_json(self) -> Json:
        data: Json = {"what": self.what, "reason": self.reason}
        return put(put(data, "note", self.note), "line", self.line)


def _dropped(data: Mapping[str, Any]) -> DroppedItem:
    line = data.get("line")
    at = int(line) if line is not None else None
    return DroppedItem(str(data["what"]), str(data["reason"]), optional_note(data, "note"), at)


@dataclass(frozen=True, slots=True)
class BlockSeen:
    """The whole block one turn got (written since issue 17): enough to show it again."""

    placed: tuple[PlacedNote, ...]
    dropped: tuple[DroppedItem, ...]
    digest: tuple[int, ...]  # the events holding the digest lines placed
    audience: AudienceKind
    budget: int
    used: int
    readable: bool


@dataclass(frozen=True, slots=True)
class ItemUsed(EventBody):
    """The usage audit: these notes went into a turn or a tool's answer, in this order."""

    notes: tuple[NoteId, ...]
    via: str | None = None  # older records have none: assembly
    block: BlockSeen | None = None

    @property
    def via_name(self) -> str:
        """What used the notes ("assembly" unless a tool's name is recorded)."""
        return self.via or "assembly"

    def to_json(self) -> Json:
        data = put({"notes": list(self.notes)}, "via", self.via)
        if (block := self.block) is not None:
            data["placed"] = [
                {"note": p.note, "rank": p.rank, "section": p.section} for p in block.placed
            ]
            data["dropped"] = [d.to_json() for d in block.dropped]
            data |= {"digest": list(block.digest), "audience": block.audience.value}
            data |= {"budget": block.budget, "used": block.used, "readable": block.readable}
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        block = None
        if "placed" in data:
            block = BlockSeen(
                tuple(
                    PlacedNote(NoteId(p["note"]), int(p["rank"]), str(p["section"]))
                    for p in data["placed"]
                ),
                tuple(_dropped(d) for d in data.get("dropped") or ()),
                tuple(int(s) for s in data.get("digest") or ()),
                AudienceKind(data["audience"]),
                int(data["budget"]),
                int(data["used"]),
                bool(data.get("readable", True)),
            )
        via = data.get("via")
        return cls(note_ids(data["notes"]), str(via) if via is not None else None, block)

    def listed_notes(self) -> tuple[NoteId, ...]:
        return self.notes

    def dropped_notes(self) -> tuple[NoteId, ...]:
        """The notes the block left out (none for an older record)."""
        dropped = self.block.dropped if self.block else ()
        return tuple(d.note for d in dropped if d.note)


@dataclass(frozen=True, slots=True)
class PersonCreated(EventBody):
    """A person's journal begins."""

    def to_json(self) -> Json:
        return {}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls()


@dataclass(frozen=True, slots=True)
class Exported(EventBody):
    """A person's data left the store: what, and whether to a file or standard output."""

    what: str
    to: str
    failed: bool = False

    def to_json(self) -> Json:
        return put({"what": self.what, "to": self.to}, "failed", True if self.failed else None)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(str(data["what"]), str(data["to"]), bool(data.get("failed", False)))
