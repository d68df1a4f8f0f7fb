"""Notes to and from the projection's JSON column (internal; not the CLI's JSON)."""

from __future__ import annotations

import json
from typing import Any

from engram.model.clock import from_micros, to_micros
from engram.model.events import Cause, EventType
from engram.model.ids import ConversationId, NoteId, PersonId, TurnId
from engram.model.notes import Change, Closure, Note, NoteStatus, Source
from engram.model.scope import Durability, Kind, Scope

# One encoder for every note: json.dumps with options builds a new one on each call (the
# projection writes and verify compares one per note). Same bytes as json.dumps(data,
# separators=(",", ":")).
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def _cause(cause: Cause | None) -> list[str | None] | None:
    return None if cause is None else [cause.conversation, cause.turn]


def _uncause(data: Any) -> Cause | None:
    if not data:
        return None
    return Cause(ConversationId(data[0]), TurnId(data[1]) if data[1] else None)


def note_to_json(note: Note) -> str:
    """Serialise a note for the projection."""
    closure = note.closure
    data: dict[str, Any] = {
        "id": note.id,
        "person": note.person,
        # StrEnum members are str: json writes them as their values, without `.value`.
        "kind": note.kind,
        "scope": note.scope,
        "durability": note.durability,
        "text_seq": note.text_seq,
        "initial": note.initial_confidence_bp,
        "from": to_micros(note.valid_from),
        "created_seq": note.created_seq,
        "actor": note.actor,
        "topic": note.topic,
        "origin": note.origin,
        "sources": [[s.conversation, s.turn, to_micros(s.at)] for s in note.sources],
        "to": to_micros(note.valid_to) if note.valid_to else None,
        "status": note.status,
        "closure": None
        if closure is None
        else [
            closure.seq,
            to_micros(closure.at),
            closure.type.value,
            closure.actor,
            closure.by_note,
            _cause(closure.cause),
        ],
        "supersedes": note.supersedes,
        "superseded_by": note.superseded_by,
        "changes": [
            [c.seq, to_micros(c.at), c.type.value, c.actor, c.detail] for c in note.changes
        ],
    }
    return _COMPACT.encode(data)


def note_from_json(text: str) -> Note:
    """Inverse of note_to_json."""
    d = json.loads(text)
    closure = d["closure"]
    return Note(
        id=NoteId(d["id"]),
        person=PersonId(d["person"]),
        kind=Kind(d["kind"]),
        scope=Scope(d["scope"]),
        durability=Durability(d["durability"]),
        text_seq=d["text_seq"],
        initial_confidence_bp=d["initial"],
        valid_from=from_micros(d["from"]),
        created_seq=d["created_seq"],
        actor=d["actor"],
        topic=d["topic"],
        origin=ConversationId(d["origin"]) if d["origin"] else None,
        sources=tuple(
            Source(ConversationId(c), TurnId(t) if t else None, from_micros(at))
            for c, t, at in d["sources"]
        ),
        valid_to=from_micros(d["to"]) if d["to"] is not None else None,
        status=NoteStatus(d["status"]),
        closure=None
        if closure is None
        else Closure(
            seq=closure[0],
            at=from_micros(closure[1]),
            type=EventType(closure[2]),
            actor=closure[3],
            by_note=NoteId(closure[4]) if closure[4] else None,
            cause=_uncause(closure[5]),
        ),
        supersedes=NoteId(d["supersedes"]) if d["supersedes"] else None,
        superseded_by=NoteId(d["superseded_by"]) if d["superseded_by"] else None,
        changes=tuple(
            Change.stored(seq, from_micros(at), EventType(kind), actor, detail)
            for seq, at, kind, actor, detail in d["changes"]
        ),
    )
