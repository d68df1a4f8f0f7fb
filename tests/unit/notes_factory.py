"""Building notes directly, for pure assembly and recall tests."""

from __future__ import annotations

from datetime import timedelta

from engram.engine.assembly import TextNote
from engram.model.ids import NoteId, PersonId
from engram.model.notes import Note
from engram.model.scope import Durability, Kind, Scope
from tests.conftest import START

SUBJECT = PersonId("p1")


def text_note(
    index: int,
    text: str | None = None,
    *,
    kind: Kind = Kind.FACT,
    scope: Scope = Scope.PORTABLE,
    topic: str | None = None,
    bp: int = 5000,
) -> TextNote:
    """A note with a readable text, created `index` minutes after START."""
    note = Note(
        id=NoteId(f"n_{index:04d}"),
        person=SUBJECT,
        kind=kind,
        scope=scope,
        durability=Durability.LASTING,
        text_seq=index,
        initial_confidence_bp=bp,
        valid_from=START + timedelta(minutes=index),
        created_seq=index,
        actor="extractor",
        topic=topic,
    )
    return TextNote(note, text or f"note number {index}")
