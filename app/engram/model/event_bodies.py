"""The catalogue of journal event bodies: one frozen class per event type (issue 18 item 10).

A body is typed everywhere but at the store's seam: the journal encodes it with `to_json`
when it appends and decodes the stored JSON with `decode_body` when it reads. The JSON is
the on-disk format the chain hashes and signs, so each `to_json` writes exactly the keys
the writers always wrote (an absent optional key stays absent), and `from_json` reads the
older variants still on disk too (tests/unit/test_event_bodies_known_answers.py pins both).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Self, TypeVar

from engram.model.event_parts import Cause, EventType
from engram.model.ids import CandidateId, ConversationId, NoteId, TurnId
from engram.model.scope import AudienceKind, Durability, Kind, Scope

Json = dict[str, Any]


class EventBody(ABC):
    """What one event says, in its own type's terms."""

    __slots__ = ()

    @abstractmethod
    def to_json(self) -> Json:
        """The body as the journal stores it (before canonical encoding)."""

    @classmethod
    @abstractmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """The body a stored JSON object holds (any variant still on disk)."""

    def named_notes(self) -> tuple[NoteId, ...]:
        """The notes this event is about, one by one (not the lists it carries), in the
        order note, old, new, restored, after, kept, into."""
        return ()

    def listed_notes(self) -> tuple[NoteId, ...]:
        """The notes the lists this event carries name (merged, closed, used, …)."""
        return ()


def _put(data: Json, key: str, value: Any) -> Json:
    """Set `key` unless `value` is None (an optional key the writers leave out)."""
    if value is not None:
        data[key] = value.value if isinstance(value, Enum) else value
    return data


def _opt_note(data: Mapping[str, Any], key: str) -> NoteId | None:
    value = data.get(key)
    return NoteId(str(value)) if value else None


def _notes(values: Iterable[Any] | None) -> tuple[NoteId, ...]:
    return tuple(NoteId(str(v)) for v in values or ())


def _cause(value: Any) -> Cause | None:
    if not value:
        return None
    turn = value.get("turn")
    return Cause(ConversationId(value["conversation"]), TurnId(turn) if turn else None)


def _cause_json(cause: Cause | None) -> Json | None:
    return cause.to_json() if cause is not None else None


def _present(*notes: NoteId | None) -> tuple[NoteId, ...]:
    return tuple(n for n in notes if n)


@dataclass(frozen=True, slots=True)
class NoteAdded(EventBody):
    """A note is learned or written (its text is the event's sealed payload)."""

    note: NoteId
    kind: Kind
    scope: Scope
    durability: Durability
    confidence_bp: int
    topic: str | None = None
    origin: ConversationId | None = None  # whose key also seals the text (C4)
    source: Cause | None = None

    def to_json(self) -> Json:
        data: Json = {"note": self.note, "kind": self.kind.value, "scope": self.scope.value}
        data |= {"durability": self.durability.value, "confidence_bp": self.confidence_bp}
        _put(data, "topic", self.topic or None)
        _put(data, "origin", self.origin)
        return _put(data, "source", _cause_json(self.source))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        origin = data.get("origin")
        return cls(
            NoteId(data["note"]),
            Kind(data["kind"]),
            Scope(data["scope"]),
            Durability(data["durability"]),
            int(data["confidence_bp"]),
            data.get("topic") or None,
            ConversationId(origin) if origin else None,
            _cause(data.get("source")),
        )

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.note,)


@dataclass(frozen=True, slots=True)
class Restated(EventBody):
    """F2: a note said again adds a source."""

    note: NoteId
    source: Cause | None = None

    def to_json(self) -> Json:
        return _put({"note": self.note}, "source", _cause_json(self.source))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(NoteId(data["note"]), _cause(data.get("source")))

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.note,)


@dataclass(frozen=True, slots=True)
class Contradicted(EventBody):
    """F1: `new` closes `old`'s interval."""

    old: NoteId
    new: NoteId

    def to_json(self) -> Json:
        return {"old": self.old, "new": self.new}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(NoteId(data["old"]), NoteId(data["new"]))

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.old, self.new)


@dataclass(frozen=True, slots=True)
class Corrected(EventBody):
    """C5: a new version `note` of `old` (new text, and maybe a new scope)."""

    old: NoteId
    note: NoteId
    scope: Scope | None = None
    kind: Kind | None = None  # never written now; kept where an older store has it

    def to_json(self) -> Json:
        data = _put({"old": self.old, "note": self.note}, "scope", self.scope)
        return _put(data, "kind", self.kind)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        scope, kind = data.get("scope"), data.get("kind")
        return cls(
            NoteId(data["old"]),
            NoteId(data["note"]),
            Scope(scope) if scope else None,
            Kind(kind) if kind else None,
        )

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.note, self.old)


@dataclass(frozen=True, slots=True)
class ScopeChanged(EventBody):
    """A note's scope changes; it keeps its id."""

    note: NoteId
    scope: Scope

    def to_json(self) -> Json:
        return {"note": self.note, "scope": self.scope.value}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(NoteId(data["note"]), Scope(data["scope"]))

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.note,)


@dataclass(frozen=True, slots=True)
class Closed(EventBody):
    """A note's interval ends (deleted, retired; for a duplicate, `kept` is the one kept)."""

    note: NoteId
    kept: NoteId | None = None

    def to_json(self) -> Json:
        return _put({"note": self.note}, "kept", self.kept)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(NoteId(data["note"]), _opt_note(data, "kept"))

    def named_notes(self) -> tuple[NoteId, ...]:
        return _present(self.note, self.kept)


class Deleted(Closed):
    """C2: a person (or an agent, at their request) deletes a note."""

    __slots__ = ()


class Retired(Closed):
    """M3: a passing note's time is up."""

    __slots__ = ()


class DuplicateRemoved(Closed):
    """M2: a duplicate goes; `kept` is the oldest, which stays."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Merged(EventBody):
    """Notes merge into `into` (never across scope classes, F4)."""

    into: NoteId
    merged: tuple[NoteId, ...]

    def to_json(self) -> Json:
        return {"into": self.into, "merged": list(self.merged)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(NoteId(data["into"]), _notes(data["merged"]))

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.into,)

    def listed_notes(self) -> tuple[NoteId, ...]:
        return self.merged


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
            _opt_note(data, "language"), _opt_note(data, "tone"), _notes(data.get("preferences"))
        )

    def ids(self) -> tuple[NoteId, ...]:
        """Every note the profile names: language, tone, then the preferences."""
        return (*_present(self.language, self.tone), *self.preferences)


@dataclass(frozen=True, slots=True)
class DigestLineAdded(EventBody):
    """M4: one conversation's digest line (its text is the sealed payload)."""

    conversation: ConversationId | None = None
    scope: Scope | None = None  # older lines have none: they read as unspecified

    def to_json(self) -> Json:
        return _put(_put({}, "conversation", self.conversation), "scope", self.scope)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        conversation, scope = data.get("conversation"), data.get("scope")
        return cls(
            ConversationId(conversation) if conversation else None,
            Scope(scope) if scope else None,
        )


@dataclass(frozen=True, slots=True)
class ConversationDeleted(EventBody):
    """C4: a conversation went: the notes it closed, those it was trimmed from, and the
    payloads shredded with it."""

    conversation: ConversationId
    closed: tuple[NoteId, ...] = ()
    trimmed: tuple[NoteId, ...] = ()
    shredded: tuple[int, ...] = ()
    kept_by_others: bool = False  # only this person's part went

    def to_json(self) -> Json:
        data: Json = {"conversation": self.conversation, "closed": list(self.closed)}
        data |= {"trimmed": list(self.trimmed), "shredded": list(self.shredded)}
        return _put(data, "kept_by_others", True if self.kept_by_others else None)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(
            ConversationId(data["conversation"]),
            _notes(data.get("closed")),
            _notes(data.get("trimmed")),
            tuple(int(s) for s in data.get("shredded") or ()),
            bool(data.get("kept_by_others", False)),
        )

    def listed_notes(self) -> tuple[NoteId, ...]:
        return (*self.closed, *self.trimmed)


@dataclass(frozen=True, slots=True)
class Reopened(EventBody):
    """F1 undone: `after`, which contradicted `note`, was deleted; `note` holds again,
    without its sources from the conversations deleted with it."""

    note: NoteId
    after: NoteId
    without_sources: tuple[ConversationId, ...] = ()

    def to_json(self) -> Json:
        data: Json = {"note": self.note, "after": self.after}
        return _put(data, "without_sources", list(self.without_sources) or None)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        gone = tuple(ConversationId(c) for c in data.get("without_sources") or ())
        return cls(NoteId(data["note"]), NoteId(data["after"]), gone)

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.note, self.after)


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
        _put(data, "durability", self.durability)
        _put(data, "confidence_bp", self.confidence_bp)
        _put(data, "extractor", self.extractor)
        _put(data, "topic", self.topic or None)
        _put(data, "origin", self.origin)
        _put(data, "source", _cause_json(self.source))
        _put(data, "restates", self.restates)
        _put(data, "contradicts", self.contradicts)
        return _put(data, "as_note", self.as_note)

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
            _cause(data.get("source")),
            _opt_note(data, "restates"),
            _opt_note(data, "contradicts"),
            _opt_note(data, "as_note"),
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
        return _put(_put(data, "note", self.note), "line", self.line)


def _dropped(data: Mapping[str, Any]) -> DroppedItem:
    line = data.get("line")
    at = int(line) if line is not None else None
    return DroppedItem(str(data["what"]), str(data["reason"]), _opt_note(data, "note"), at)


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
        data = _put({"notes": list(self.notes)}, "via", self.via)
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
        return cls(_notes(data["notes"]), str(via) if via is not None else None, block)

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
class Undone(EventBody):
    """An edit, change of scope or deletion (event `undoes`) undone by a new event.

    `action` is "edit" (note closed, `restored` reopened as `new`), "rescope" (note back to
    `scope`) or "delete" (`restored` reopened, `new` the same id — or, before issue 17, a
    restored copy — and `recloses` contradicted again)."""

    undoes: int
    action: str
    note: NoteId | None = None
    scope: Scope | None = None
    restored: NoteId | None = None
    new: NoteId | None = None
    recloses: tuple[NoteId, ...] = ()

    def to_json(self) -> Json:
        data: Json = {"undoes": self.undoes, "action": self.action}
        _put(data, "note", self.note)
        _put(data, "scope", self.scope)
        _put(data, "restored", self.restored)
        _put(data, "new", self.new)
        return _put(data, "recloses", list(self.recloses) or None)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        scope = data.get("scope")
        return cls(
            int(data["undoes"]),
            str(data["action"]),
            _opt_note(data, "note"),
            Scope(scope) if scope else None,
            _opt_note(data, "restored"),
            _opt_note(data, "new"),
            _notes(data.get("recloses")),
        )

    @property
    def holds(self) -> NoteId:
        """The note that holds once the undo is written."""
        held = self.new or self.note
        assert held is not None, "every undo names the note that holds"
        return held

    def named_notes(self) -> tuple[NoteId, ...]:
        return _present(self.note, self.new, self.restored)

    def listed_notes(self) -> tuple[NoteId, ...]:
        return self.recloses


@dataclass(frozen=True, slots=True)
class Exported(EventBody):
    """A person's data left the store: what, and whether to a file or standard output."""

    what: str
    to: str
    failed: bool = False

    def to_json(self) -> Json:
        return _put({"what": self.what, "to": self.to}, "failed", True if self.failed else None)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(str(data["what"]), str(data["to"]), bool(data.get("failed", False)))


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
    """The candidate a suggestion, review or application names (None for other events)."""
    if isinstance(body, CandidateSuggested | CandidateReviewed | CandidateApplied):
        return body.candidate
    return None
