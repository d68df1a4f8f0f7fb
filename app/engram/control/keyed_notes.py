"""A person's notes named by keys, for key-value faces (the LangGraph store adapter).

A key-value store names an item by a key its caller chooses (LangMem: a random UUID) and
expects a put under that key again to change the same item. Engram names notes itself,
and an edit is a new version with a new id (C5). So:

- every note answers to a key of its own, a UUID holding its id (`key_of`): listings show
  it, and frameworks that type ids as UUIDs (LangMem) accept it;
- a key a caller chose names the note whose id is derived from the person and the key
  (`derived_id`), so the same key of two people never meets (C1); a put under a key whose
  note was deleted makes the next generation;
- either kind of key follows its note to the version that holds now (current_version:
  through new versions, contradictions and merges), and leads nowhere after a deletion.

A derived id is in the clear like every note id and is a hash of the key: a caller's keys
should say nothing about the person (LangMem's are random).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.model.ids import NoteId, PersonId
from engram.model.notes import Note

# A UUID of version 8 (RFC 9562's custom layout) whose last twelve digits are a note id's.
_KEY_PREFIX = "e9a30000-0000-8000-8000-"
_OWN_KEY = re.compile(r"^e9a30000-0000-8000-8000-([0-9a-f]{12})$")
_NOTE_ID = re.compile(r"^n_([0-9a-f]{12})$")
_WINDOW = 8  # generations looked up per read


def key_of(note: NoteId) -> str:
    """The key a note answers to (its id itself if it is not of the usual form)."""
    matched = _NOTE_ID.fullmatch(note)
    return _KEY_PREFIX + matched[1] if matched else str(note)


def named_note(key: str) -> NoteId | None:
    """The note a key names directly: one of `key_of`'s, or a note id as it is."""
    own = _OWN_KEY.fullmatch(key.lower())
    if own:
        return NoteId("n_" + own[1])
    return NoteId(key) if _NOTE_ID.fullmatch(key) else None


def derived_id(person: PersonId, key: str, generation: int) -> NoteId:
    """The id of the note a caller's key names in a generation (keyed by the person)."""
    data = f"{person}\0{generation}\0{key}".encode("utf-8", "surrogatepass")
    return NoteId("n_" + hashlib.blake2b(data, digest_size=6, person=b"engram-kv-key").hexdigest())


@dataclass(frozen=True, slots=True)
class KeyedNote:
    """What a key names now: the note that holds (None if none), and the id a new note
    under this key takes."""

    note: Note | None
    fresh: NoteId


def resolve(session: PersonSession, key: str) -> KeyedNote:
    """The note `key` names for this person now, and the id of its next generation.

    Reads notes without the scope rule (ids and states only, no text): the caller decides
    what its audience may see through a scoped read (runtime.context.read_eligible)."""
    direct = named_note(key)
    last = direct if direct and memory_control.notes_by_ids(session, [direct]) else None
    generation = 0
    while True:
        window = [
            derived_id(session.person, key, g) for g in range(generation, generation + _WINDOW)
        ]
        present = {note.id for note in memory_control.notes_by_ids(session, window)}
        for note_id in window:
            if note_id not in present:
                holding = memory_control.current_version(session, last) if last else None
                return KeyedNote(holding, note_id)
            last = note_id
        generation += _WINDOW
