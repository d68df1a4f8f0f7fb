"""The maintenance pass's decisions (M1-M3) — pure: memory in, a plan of changes out.

- M1 rebuild the profile document (language, tone, sorted preferences) from active notes;
- M2 remove exact duplicates, keeping the oldest — only within one scope, so a private
  note and a portable one never stand in for each other (F4);
- M3 retire transient notes four hours after they were learned; lasting notes never
  expire by age.

The caller turns the plan into journal events, so replaying the journal reproduces every
change. This module is one of the five allowed to read notes regardless of scope (S5).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from engram.engine.assembly import TextNote, split_profile
from engram.engine.ranking import rank
from engram.engine.unscoped import unscoped_notes
from engram.model.ids import NoteId
from engram.model.notes import Note, PersonMemory
from engram.model.scope import Durability

TRANSIENT_LIFETIME = timedelta(hours=4)  # M3


@dataclass(frozen=True, slots=True)
class MaintenancePlan:
    """What one maintenance pass changes for one person."""

    retire: tuple[NoteId, ...] = ()
    duplicates: tuple[tuple[NoteId, NoteId], ...] = ()  # (removed, kept)
    profile: str | None = None  # the new profile document, or None if unchanged

    @property
    def empty(self) -> bool:
        return not (self.retire or self.duplicates or self.profile is not None)


def active_text_seqs(memory: PersonMemory) -> list[int]:
    """The payloads the plan needs: the texts of every active note."""
    return [n.text_seq for n in unscoped_notes(memory) if n.is_active]


def plan(
    memory: PersonMemory,
    texts: Mapping[int, str | None],
    now: datetime,
    current_profile: str | None,
) -> MaintenancePlan:
    """Decide M3, then M2 among what stays, then M1 from what remains active."""
    active = [n for n in unscoped_notes(memory) if n.is_active]
    retire = [
        n.id
        for n in active
        if n.durability is Durability.TRANSIENT and n.valid_from + TRANSIENT_LIFETIME <= now
    ]
    retiring = set(retire)
    staying = [n for n in active if n.id not in retiring]
    duplicates = _duplicates(staying, texts)
    removed = {dup for dup, _ in duplicates}
    remaining = [n for n in staying if n.id not in removed]
    document = profile_document(
        [TextNote(n, text) for n in rank(remaining) if (text := texts.get(n.text_seq))]
    )
    return MaintenancePlan(
        tuple(retire),
        tuple(duplicates),
        document if document != (current_profile or "") else None,
    )


def _duplicates(notes: list[Note], texts: Mapping[int, str | None]) -> list[tuple[NoteId, NoteId]]:
    """M2: same kind, same scope, same text (spacing aside): all but the oldest go."""
    oldest: dict[tuple[str, str, str], Note] = {}
    found: list[tuple[NoteId, NoteId]] = []
    for note in sorted(notes, key=lambda n: n.created_seq):
        text = texts.get(note.text_seq)
        if text is None:
            continue
        key = (note.kind.value, note.scope.value, " ".join(text.split()))
        kept = oldest.setdefault(key, note)
        if kept is not note:
            found.append((note.id, kept.id))
    return found


def profile_document(ranked: list[TextNote]) -> str:
    """M1: language, tone and the preferences in ranking order, one per line."""
    profile, _ = split_profile(ranked)
    lines = []
    if profile.language:
        lines.append(f"Language: {profile.language.text}")
    if profile.tone:
        lines.append(f"Tone: {profile.tone.text}")
    lines += [f"Preference: {p.text}" for p in profile.preferences]
    return "\n".join(lines)
