"""The maintenance pass's decisions (M1-M3) — pure: memory in, a plan of changes out.

- M1 rebuild the profile document (language, tone, sorted preferences) from active notes —
  recorded as the ids of the notes it is made of, never as a copy of their text, so
  deleting a conversation (C4) or a note leaves nothing of it behind in the profile;
- M2 remove exact duplicates, keeping the oldest — only within one scope, so a private
  note and a portable one never stand in for each other (F4);
- M3 retire transient notes four hours after they were learned; lasting notes never
  expire by age.

The caller turns the plan into journal events, so replaying the journal reproduces every
change. This module is one of the five allowed to read notes regardless of scope (S5).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from engram.engine.assembly import TextNote, split_profile
from engram.engine.ranking import rank
from engram.engine.unscoped import unscoped_notes
from engram.model.event_bodies import ProfileRebuilt
from engram.model.ids import NoteId
from engram.model.notes import Note, PersonMemory
from engram.model.scope import Durability

TRANSIENT_LIFETIME = timedelta(hours=4)  # M3
EMPTY_PROFILE = ProfileRebuilt()


@dataclass(frozen=True, slots=True)
class MaintenancePlan:
    """What one maintenance pass changes for one person."""

    retire: tuple[NoteId, ...] = ()
    duplicates: tuple[tuple[NoteId, NoteId], ...] = ()  # (removed, kept)
    profile: ProfileRebuilt | None = None  # the new profile's note ids, or None if unchanged

    @property
    def empty(self) -> bool:
        return not (self.retire or self.duplicates or self.profile is not None)


class UnopenedMemory(Protocol):
    """A person's memory as the store holds it, handed to merge unopened: the maintenance
    pass, which is not allow-listed, passes it on without reading a note (S5)."""

    def unscoped_memory(self) -> PersonMemory: ...


def plan_from(
    stored: UnopenedMemory,
    read_texts: Callable[[list[int]], Mapping[int, str | None]],
    now: datetime,
    current_profile: ProfileRebuilt | None,
) -> MaintenancePlan:
    """The maintenance pass's plan, with merge (allow-listed) doing the unscoped read."""
    memory = stored.unscoped_memory()
    return plan(memory, read_texts(active_text_seqs(memory)), now, current_profile)


def expiry(note: Note) -> datetime | None:
    """M3: when a transient note is over (four hours after it was learned); None for any
    other note."""
    return note.valid_from + TRANSIENT_LIFETIME if note.durability is Durability.TRANSIENT else None


def expired(note: Note, now: datetime) -> bool:
    """M3: a transient note is over four hours after it was learned, whether or not the
    maintenance pass has retired it yet (reads ask this too)."""
    ends = expiry(note)
    return ends is not None and ends <= now


def active_text_seqs(memory: PersonMemory) -> list[int]:
    """The payloads the plan needs: the texts of every active note."""
    return [n.text_seq for n in unscoped_notes(memory) if n.is_active]


def plan(
    memory: PersonMemory,
    texts: Mapping[int, str | None],
    now: datetime,
    current_profile: ProfileRebuilt | None,
) -> MaintenancePlan:
    """Decide M3, then M2 among what stays, then M1 from what remains active."""
    active = [n for n in unscoped_notes(memory) if n.is_active]
    retire = [n.id for n in active if expired(n, now)]
    retiring = set(retire)
    staying = [n for n in active if n.id not in retiring]
    duplicates = _duplicates(staying, texts)
    removed = {dup for dup, _ in duplicates}
    remaining = [n for n in staying if n.id not in removed]
    profile = profile_ids(
        [TextNote(n, text) for n in rank(remaining) if (text := texts.get(n.text_seq))]
    )
    return MaintenancePlan(
        tuple(retire),
        tuple(duplicates),
        profile if profile != (current_profile or EMPTY_PROFILE) else None,
    )


def _duplicates(notes: list[Note], texts: Mapping[int, str | None]) -> list[tuple[NoteId, NoteId]]:
    """M2: same kind, scope, durability and text (spacing aside): all but the oldest go.
    Durability counts too, or a lasting note could give way to a transient one that
    then expires (M3)."""
    oldest: dict[tuple[str, str, str, str], Note] = {}
    found: list[tuple[NoteId, NoteId]] = []
    for note in sorted(notes, key=lambda n: n.created_seq):
        text = texts.get(note.text_seq)
        if text is None:
            continue
        key = (note.kind.value, note.scope.value, note.durability.value, " ".join(text.split()))
        kept = oldest.setdefault(key, note)
        if kept is not note:
            found.append((note.id, kept.id))
    return found


def profile_ids(ranked: list[TextNote]) -> ProfileRebuilt:
    """M1: which notes make up the profile — language, tone, preferences in rank order."""
    profile, _ = split_profile(ranked)
    return ProfileRebuilt(
        language=profile.language.note.id if profile.language else None,
        tone=profile.tone.note.id if profile.tone else None,
        preferences=tuple(p.note.id for p in profile.preferences),
    )


def profile_document(profile: ProfileRebuilt, texts: Mapping[str, str | None]) -> str:
    """The profile as text, from its note ids and their current texts (by note id)."""
    lines = []
    for label, note in (("Language", profile.language), ("Tone", profile.tone)):
        if note and (text := texts.get(note)):
            lines.append(f"{label}: {text}")
    lines += [f"Preference: {texts[n]}" for n in profile.preferences if texts.get(n)]
    return "\n".join(lines)
