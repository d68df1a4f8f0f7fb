"""How projection rows map to model values: a note's row, a usage row, a candidate row.

Shared by the write side (projection.py), the reads beside it and the replay check, so a
note is laid out in one place and read back the same way everywhere.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row

from engram.model.clock import from_micros, to_micros
from engram.model.ids import CandidateId, ConversationId, NoteId, TurnId
from engram.model.notes import CandidateState, Note, Usage
from engram.model.scope import Kind, Scope
from engram.store.codec import note_to_json

# The columns of `note_state`, in the table's order (tests/unit check they are).
NOTE_COLUMNS = (
    "person",
    "id",
    "kind",
    "scope",
    "status",
    "origin",
    "confidence_bp",
    "last_source_at",
    "valid_from",
    "valid_to",
    "created_seq",
    "data",
)


def note_values(note: Note) -> tuple[Any, ...]:
    """A note as its `note_state` row's values, in NOTE_COLUMNS order: the indexed columns
    and the JSON of the whole note (compared with a stored row as it is: the replay check)."""
    return (
        note.person,
        note.id,
        note.kind,
        note.scope,
        note.status,
        note.origin,
        note.confidence_bp,
        to_micros(note.last_source_at),
        to_micros(note.valid_from),
        to_micros(note.valid_to) if note.valid_to else None,
        note.created_seq,
        note_to_json(note),
    )


def note_row(note: Note) -> dict[str, Any]:
    """A note as its `note_state` row, by column name."""
    return dict(zip(NOTE_COLUMNS, note_values(note), strict=True))


def usage_from_row(r: Row[Any]) -> Usage:
    """One use of a note, from its `usage` row."""
    return Usage(
        r.seq,
        from_micros(r.at),
        r.via,
        r.rank,
        ConversationId(r.conversation) if r.conversation else None,
        TurnId(r.turn) if r.turn else None,
    )


def candidate_from_row(r: Row[Any]) -> CandidateState:
    """A learning candidate, from its `candidates` row."""
    return CandidateState(
        CandidateId(r.id),
        r.revision,
        r.status,
        r.payload_seq,
        Kind(r.kind),
        Scope(r.scope),
        NoteId(r.note) if r.note else None,
    )
