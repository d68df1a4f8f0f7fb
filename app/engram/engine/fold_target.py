"""What the fold reads and writes (`FoldTarget`), the errors it raises, and the one way it
closes a note's interval: shared by engine.fold and the candidate steps in fold_candidates."""

from __future__ import annotations

import dataclasses
from typing import Protocol

from engram.model.events import Event
from engram.model.ids import CandidateId, ConversationId, NoteId, PersonId, TurnId
from engram.model.notes import CandidateState, Closure, DigestLine, Note, NoteStatus, Usage


class FoldError(ValueError):
    """An event that cannot apply to the state it follows (a bug or a tampered journal)."""


class StaleRevision(FoldError):
    """A review that names a candidate revision someone else's decision replaced (P6)."""


class FoldTarget(Protocol):
    """The state the fold reads and writes, one event at a time."""

    person: PersonId
    seq: int

    def unscoped_note(self, note_id: NoteId) -> Note | None: ...
    def put_note(self, note: Note) -> None: ...
    def add_digest(self, line: DigestLine) -> None: ...
    def set_profile(self, seq: int) -> None: ...
    def mark_processed(self, conversation: ConversationId, turns: list[TurnId]) -> None: ...
    def add_usage(self, note: NoteId, usage: Usage) -> None: ...
    def get_candidate(self, candidate: CandidateId) -> CandidateState | None: ...
    def put_candidate(self, state: CandidateState) -> None: ...
    def mark_conversation_deleted(self, conversation: ConversationId) -> None: ...
    def set_seq(self, seq: int) -> None: ...


def close_note(note: Note, event: Event, status: NoteStatus, by_note: NoteId | None = None) -> Note:
    """`note` with its interval closed by `event`."""
    closure = Closure(event.seq, event.at, event.type, event.actor, by_note, event.cause)
    return dataclasses.replace(note, status=status, valid_to=event.at, closure=closure)
