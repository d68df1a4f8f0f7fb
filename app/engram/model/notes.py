"""Notes as the fold reconstructs them, and a person's folded memory."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from engram.model.events import Cause, EventType
from engram.model.ids import CandidateId, ConversationId, NoteId, PersonId, TurnId
from engram.model.release import let_go
from engram.model.scope import Durability, Kind, Scope

CONFIDENCE_CAP_BP = 10_000
CORROBORATION_BP = 500


class NoteStatus(StrEnum):
    """Where a note's validity interval stands."""

    ACTIVE = "active"
    CONTRADICTED = "contradicted"
    CORRECTED = "corrected"
    DELETED = "deleted"
    RETIRED = "retired"
    MERGED = "merged"
    REMOVED = "removed"


@dataclass(frozen=True, slots=True)
class Source:
    """A conversation turn that stated or restated a note."""

    conversation: ConversationId
    turn: TurnId | None
    at: datetime


@dataclass(frozen=True, slots=True)
class Closure:
    """What closed a note's validity interval, and on what evidence."""

    seq: int
    at: datetime
    type: EventType
    actor: str
    by_note: NoteId | None = None
    cause: Cause | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """A change to an open note that did not close it (scope change, restatement).

    A change of scope (a scope change, or its undo) also holds the scopes it went between,
    typed; `detail` says the same in words ("direct -> portable"), the form a stored note
    keeps (`stored` reads it back)."""

    seq: int
    at: datetime
    type: EventType
    actor: str
    detail: str = ""
    from_scope: Scope | None = None
    to_scope: Scope | None = None

    @classmethod
    def rescoped(
        cls, seq: int, at: datetime, type_: EventType, actor: str, before: Scope, after: Scope
    ) -> Change:
        """A change of a note's scope from `before` to `after`."""
        return cls(seq, at, type_, actor, f"{before} -> {after}", before, after)

    @classmethod
    def stored(cls, seq: int, at: datetime, type_: EventType, actor: str, detail: str) -> Change:
        """A change as a stored note keeps it: its scopes read back from its words."""
        before, arrow, after = detail.partition(" -> ")
        scopes = {s.value for s in Scope}
        if type_ in _RESCOPING and arrow and before in scopes and after in scopes:
            return cls.rescoped(seq, at, type_, actor, Scope(before), Scope(after))
        return cls(seq, at, type_, actor, detail)


# The changes that can move a note between scopes: a scope change, and the undo of one.
_RESCOPING = frozenset({EventType.SCOPE_CHANGED, EventType.UNDONE})


@dataclass(frozen=True, slots=True)
class Note:
    """One validity interval of one statement about a person.

    The text is not held here: `text_seq` names the journal event whose sealed payload
    holds it, so folding never decrypts and reading text is lazy.
    """

    id: NoteId
    person: PersonId
    kind: Kind
    scope: Scope
    durability: Durability
    text_seq: int
    initial_confidence_bp: int
    valid_from: datetime
    created_seq: int
    actor: str
    topic: str | None = None
    origin: ConversationId | None = None
    sources: tuple[Source, ...] = ()
    valid_to: datetime | None = None
    status: NoteStatus = NoteStatus.ACTIVE
    closure: Closure | None = None
    supersedes: NoteId | None = None
    superseded_by: NoteId | None = None
    changes: tuple[Change, ...] = ()

    @property
    def is_active(self) -> bool:
        """Open interval: the note currently holds."""
        return self.status is NoteStatus.ACTIVE

    @property
    def corroborators(self) -> tuple[ConversationId, ...]:
        """Distinct conversations, other than the first source's, that restated it (F3)."""
        if not self.sources:
            return ()
        first = self.sources[0].conversation
        seen: dict[ConversationId, None] = {}
        for source in self.sources[1:]:
            if source.conversation != first:
                seen.setdefault(source.conversation, None)
        return tuple(seen)

    @property
    def confidence_bp(self) -> int:
        """Initial confidence + 500 per corroborator, capped at 10,000 (F3)."""
        raw = self.initial_confidence_bp + CORROBORATION_BP * len(self.corroborators)
        return min(CONFIDENCE_CAP_BP, raw)

    @property
    def last_source_at(self) -> datetime:
        """The most recent source, or creation when none (ranking's second key)."""
        if not self.sources:
            return self.valid_from
        return max(source.at for source in self.sources)


def note_revision(note: Note, before: int | None = None) -> int:
    """A note's revision: the journal position of the last change to its words, scope or
    status (a restatement adds a source and is none), counting only changes before
    position `before` when given. A decision on the note records the revision it was made
    against (issue 21 item 3)."""
    limit = before if before is not None else 1 << 62
    seqs = [note.created_seq]
    seqs += [c.seq for c in note.changes if c.seq < limit and c.type is not EventType.RESTATED]
    if note.closure is not None and note.closure.seq < limit:
        seqs.append(note.closure.seq)
    return max(seqs)


@dataclass(frozen=True, slots=True)
class NoteFilter:
    """Which notes a listing shows, in which order: "rank" (the engine's ranking) or a
    column — created, kind, scope, confidence, valid_from, valid_to, status. None means any.
    Text is not filterable here: it is sealed (control.notes.matching_text decrypts)."""

    statuses: Collection[NoteStatus] | None = (NoteStatus.ACTIVE,)
    scopes: Collection[Scope] | None = None
    kinds: Collection[Kind] | None = None
    order: str = "rank"
    descending: bool = False
    # Only notes created after this journal entry ("learned since my last visit").
    created_after_seq: int | None = None


EVERY_NOTE = NoteFilter(statuses=None, order="created")
EVERY_ACTIVE_NOTE = NoteFilter(order="created")


@dataclass(frozen=True, slots=True)
class Usage:
    """A note went into a turn's context or a tool's answer (the injection ledger)."""

    seq: int
    at: datetime
    via: str
    rank: int
    conversation: ConversationId | None
    turn: TurnId | None


@dataclass(frozen=True, slots=True)
class DigestLine:
    """A recent-conversation digest line; its text is the payload of event `seq`."""

    seq: int
    at: datetime
    conversation: ConversationId | None
    scope: Scope = Scope.UNSPECIFIED


@dataclass(frozen=True, slots=True)
class CandidateState:
    """A learning candidate's review state (P5, P6)."""

    id: CandidateId
    revision: int
    status: str
    payload_seq: int
    kind: Kind
    scope: Scope
    note: NoteId | None = None


@dataclass
class PersonMemory:
    """Everything the fold reconstructs for one person.

    Notes are private (`_notes`): prompt-facing code must select them through the scope rule
    (engine.scope) and only the allow-listed modules may use the unscoped accessor (S5).
    """

    person: PersonId
    seq: int = 0
    _notes: dict[NoteId, Note] = field(default_factory=dict)
    digest: list[DigestLine] = field(default_factory=list)
    profile_seq: int | None = None
    processed_turns: set[tuple[ConversationId, TurnId]] = field(default_factory=set)
    usage: dict[NoteId, list[Usage]] = field(default_factory=dict)
    candidates: dict[CandidateId, CandidateState] = field(default_factory=dict)
    deleted_conversations: set[ConversationId] = field(default_factory=set)

    def copy(self) -> PersonMemory:
        """A copy the fold can extend without touching this one (notes are immutable)."""
        return PersonMemory(
            person=self.person,
            seq=self.seq,
            _notes=dict(self._notes),
            digest=list(self.digest),
            profile_seq=self.profile_seq,
            processed_turns=set(self.processed_turns),
            usage={key: list(value) for key, value in self.usage.items()},
            candidates=dict(self.candidates),
            deleted_conversations=set(self.deleted_conversations),
        )

    def note_count(self) -> int:
        """How many notes (any status) the person has: a count reveals no scope."""
        return len(self._notes)

    def let_go(self) -> None:
        """Empty this memory a piece at a time (a replay checked and done with): freeing
        100,000 notes at once keeps the interpreter from every other thread (release)."""
        let_go(self._notes, self.digest, self.processed_turns, self.usage, self.candidates)

    # The FoldTarget protocol (engine.fold): how the fold reads and writes state.
    def unscoped_note(self, note_id: NoteId) -> Note | None:
        """One note by id, any scope and status: part of the unscoped accessor, so only the
        allow-listed modules may call it (S5)."""
        return self._notes.get(note_id)

    def unscoped_contradicted_by(self, notes: Collection[NoteId]) -> list[Note]:
        """Notes that one of `notes` contradicted (F1), any scope (S5: allow-listed modules
        only), in creation order."""
        found = [
            n
            for n in self._notes.values()
            if n.status is NoteStatus.CONTRADICTED
            and n.closure is not None
            and n.closure.by_note in notes
        ]
        return sorted(found, key=lambda n: n.created_seq)

    def put_note(self, note: Note) -> None:
        """Store a note version produced by the fold."""
        self._notes[note.id] = note

    def add_digest(self, line: DigestLine) -> None:
        """Record a digest line."""
        self.digest.append(line)

    def set_profile(self, seq: int) -> None:
        """Point at the latest profile document."""
        self.profile_seq = seq

    def mark_processed(self, conversation: ConversationId, turns: list[TurnId]) -> None:
        """Record turns extraction has handled, notes or not (W2)."""
        self.processed_turns.update((conversation, turn) for turn in turns)

    def add_usage(self, note: NoteId, usage: Usage) -> None:
        """Record one use of a note."""
        self.usage.setdefault(note, []).append(usage)

    def get_candidate(self, candidate: CandidateId) -> CandidateState | None:
        """One candidate by id."""
        return self.candidates.get(candidate)

    def put_candidate(self, state: CandidateState) -> None:
        """Store a candidate's new state."""
        self.candidates[state.id] = state

    def mark_conversation_deleted(self, conversation: ConversationId) -> None:
        """Remember that a conversation was deleted (its text can no longer be read)."""
        self.deleted_conversations.add(conversation)

    def set_seq(self, seq: int) -> None:
        """Advance to the last folded event."""
        self.seq = seq
