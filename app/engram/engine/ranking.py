"""One ranking for extraction, turn assembly and recall alike.

Active notes only, by confidence descending, then most recent source, then creation time,
then id. The store's SQL ordering mirrors `rank_key`; a test holds them equal.
"""

from __future__ import annotations

from collections.abc import Iterable

from engram.model.clock import to_micros
from engram.model.notes import Note


def rank_key(note: Note) -> tuple[int, int, int, str]:
    """Sort key: smaller sorts first."""
    return (
        -note.confidence_bp,
        -to_micros(note.last_source_at),
        to_micros(note.valid_from),
        note.id,
    )


def rank(notes: Iterable[Note]) -> list[Note]:
    """Active notes in ranking order."""
    return sorted((note for note in notes if note.is_active), key=rank_key)
