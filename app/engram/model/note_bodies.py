"""Journal event bodies that change notes (F1-F5, C2, C4, C5, M2, M3): one frozen class per
event type, catalogued in `event_bodies`."""

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
from engram.model.ids import CandidateId, ConversationId, NoteId
from engram.model.scope import Durability, Kind, Scope


def _revision(data: Mapping[str, Any]) -> int | None:
    """The revision a decision was made against (issue 21; absent in older events)."""
    value = data.get("revision")
    return int(value) if value is not None else None


def _together(data: Mapping[str, Any]) -> int | None:
    """How many notes one bulk change made this event one of (absent: a change on its own)."""
    value = data.get("together")
    return int(value) if value is not None else None


def _candidate(data: Mapping[str, Any]) -> CandidateId | None:
    value = data.get("candidate")
    return CandidateId(str(value)) if value else None


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
        put(data, "topic", self.topic or None)
        put(data, "origin", self.origin)
        return put(data, "source", cause_json(self.source))

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
            cause_of(data.get("source")),
        )

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.note,)


@dataclass(frozen=True, slots=True)
class Restated(EventBody):
    """F2: a note said again adds a source."""

    note: NoteId
    source: Cause | None = None

    def to_json(self) -> Json:
        return put({"note": self.note}, "source", cause_json(self.source))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(NoteId(data["note"]), cause_of(data.get("source")))

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
    revision: int | None = None  # `old`'s revision the edit was made against (issue 21)
    candidate: CandidateId | None = None  # the edit of an approval with edit (issue 21)

    def to_json(self) -> Json:
        data = put({"old": self.old, "note": self.note}, "scope", self.scope)
        put(data, "kind", self.kind)
        put(data, "revision", self.revision)
        return put(data, "candidate", self.candidate)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        scope, kind = data.get("scope"), data.get("kind")
        return cls(
            NoteId(data["old"]),
            NoteId(data["note"]),
            Scope(scope) if scope else None,
            Kind(kind) if kind else None,
            _revision(data),
            _candidate(data),
        )

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.note, self.old)


@dataclass(frozen=True, slots=True)
class ScopeChanged(EventBody):
    """A note's scope changes; it keeps its id."""

    note: NoteId
    scope: Scope
    revision: int | None = None  # the note's revision the change was made against
    candidate: CandidateId | None = None  # the change of an approval with edit
    together: int | None = None  # one of this many notes changed at once (issue 21 item 7)

    def to_json(self) -> Json:
        data: Json = {"note": self.note, "scope": self.scope.value}
        put(data, "revision", self.revision)
        put(data, "together", self.together)
        return put(data, "candidate", self.candidate)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(
            NoteId(data["note"]),
            Scope(data["scope"]),
            _revision(data),
            _candidate(data),
            _together(data),
        )

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.note,)


@dataclass(frozen=True, slots=True)
class Closed(EventBody):
    """A note's interval ends (deleted, retired; for a duplicate, `kept` is the one kept)."""

    note: NoteId
    kept: NoteId | None = None
    revision: int | None = None  # a deletion: the note's revision it was made against

    def to_json(self) -> Json:
        return put(put({"note": self.note}, "kept", self.kept), "revision", self.revision)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(NoteId(data["note"]), optional_note(data, "kept"), _revision(data))

    def named_notes(self) -> tuple[NoteId, ...]:
        return present(self.note, self.kept)


@dataclass(frozen=True, slots=True)
class Deleted(Closed):
    """C2: a person (or an agent, at their request) deletes a note. A note forgotten
    (issue 21 item 7) also names the journal entries whose payloads — the words of each of
    its versions and of the suggestions they came from — were shredded with it."""

    shredded: tuple[int, ...] = ()
    together: int | None = None  # one of this many notes deleted at once (issue 21 item 7)

    def to_json(self) -> Json:
        data = Closed.to_json(self)
        put(data, "together", self.together)
        return put(data, "shredded", list(self.shredded) if self.shredded else None)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        shredded = tuple(int(s) for s in data.get("shredded") or ())
        return cls(
            NoteId(data["note"]),
            optional_note(data, "kept"),
            _revision(data),
            shredded,
            _together(data),
        )


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
        return cls(NoteId(data["into"]), note_ids(data["merged"]))

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.into,)

    def listed_notes(self) -> tuple[NoteId, ...]:
        return self.merged


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
        return put(data, "kept_by_others", True if self.kept_by_others else None)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(
            ConversationId(data["conversation"]),
            note_ids(data.get("closed")),
            note_ids(data.get("trimmed")),
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
        return put(data, "without_sources", list(self.without_sources) or None)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        gone = tuple(ConversationId(c) for c in data.get("without_sources") or ())
        return cls(NoteId(data["note"]), NoteId(data["after"]), gone)

    def named_notes(self) -> tuple[NoteId, ...]:
        return (self.note, self.after)


@dataclass(frozen=True, slots=True)
class Undone(EventBody):
    """An edit, change of scope or deletion (event `undoes`) undone by a new event.

    `action` is "edit" (note closed, `restored` reopened as `new`), "rescope" (note back to
    `scope`) or "delete" (`restored` reopened, `new` the same id — or, before issue 17, a
    restored copy — and `recloses` contradicted again).

    A decision on a candidate undone (issue 21 item 8) names the `candidate`, back to
    pending: `action` "reject", or "approve", where `note` is the note the approval made,
    which closes — or, with `restatement` (that event's position), the note it restated,
    which loses the source the restatement added."""

    undoes: int
    action: str
    note: NoteId | None = None
    scope: Scope | None = None
    restored: NoteId | None = None
    new: NoteId | None = None
    recloses: tuple[NoteId, ...] = ()
    candidate: CandidateId | None = None
    restatement: int | None = None

    def to_json(self) -> Json:
        data: Json = {"undoes": self.undoes, "action": self.action}
        put(data, "note", self.note)
        put(data, "scope", self.scope)
        put(data, "restored", self.restored)
        put(data, "new", self.new)
        put(data, "recloses", list(self.recloses) or None)
        put(data, "candidate", self.candidate)
        return put(data, "restatement", self.restatement)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        scope = data.get("scope")
        return cls(
            int(data["undoes"]),
            str(data["action"]),
            optional_note(data, "note"),
            Scope(scope) if scope else None,
            optional_note(data, "restored"),
            optional_note(data, "new"),
            note_ids(data.get("recloses")),
            _candidate(data),
            int(data["restatement"]) if data.get("restatement") is not None else None,
        )

    @property
    def holds(self) -> NoteId:
        """The note that holds once the undo is written."""
        held = self.new or self.note
        assert held is not None, "every undo names the note that holds"
        return held

    def named_notes(self) -> tuple[NoteId, ...]:
        return present(self.note, self.new, self.restored)

    def listed_notes(self) -> tuple[NoteId, ...]:
        return self.recloses
