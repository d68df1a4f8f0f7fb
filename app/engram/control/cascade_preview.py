"""What deleting a conversation does, as typed values, and the preview in words (C4).

`Cascade` is one person's part (which notes close, survive, reopen, lose their words, which
suggestions are rejected); control.conversations computes it. `CascadePreview` is the
preview every face prints (issue 18 item 9): its verdict (for the asker alone, or for
everyone in the conversation), its headline sentence, and for each person affected one
sentence per note or suggestion. The window, the CLI and HTTP print it; none words it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from engram.control.views import NoteView
from engram.control.wording import counted, listed, verb
from engram.model.ids import CandidateId, ConversationId, PersonId
from engram.model.notes import Note

REJECTED_BECAUSE = "the conversation it came from was deleted"
GONE_TEXT = "[text already removed]"
NONE = "none"


@dataclass(frozen=True, slots=True)
class CascadeNote:
    """One note in a cascade, and why deleting the conversation does what it does to it."""

    view: NoteView
    reason: str

    @property
    def note(self) -> Note:
        """The note as it stands before the deletion."""
        return self.view.note

    @property
    def text(self) -> str | None:
        """Its text (None when already gone)."""
        return self.view.text

    def to_json(self) -> dict[str, Any]:
        """The note's JSON plus the reason."""
        return {**self.view.to_json(), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class CascadeCandidate:
    """A pending suggestion learned in the conversation: the deletion rejects it."""

    id: CandidateId
    revision: int
    text: str | None

    def to_json(self) -> dict[str, Any]:
        """Its id, words and the reason it is rejected with."""
        return {"id": self.id, "text": self.text, "reason": REJECTED_BECAUSE}


@dataclass(frozen=True, slots=True)
class Cascade:
    """What deleting a conversation does to one person's memory: which notes close, which
    survive (losing it as a source), which reopen (what they were contradicted by closes),
    which already closed notes lose their text, and which pending suggestions are rejected."""

    person: PersonId
    closes: tuple[CascadeNote, ...] = ()
    survives: tuple[CascadeNote, ...] = ()
    reopens: tuple[CascadeNote, ...] = ()
    shreds: tuple[CascadeNote, ...] = ()
    rejects: tuple[CascadeCandidate, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The person and each list, as `--json` prints it."""
        return {
            "person": self.person,
            "closes": [v.to_json() for v in self.closes],
            "survives": [v.to_json() for v in self.survives],
            "reopens": [v.to_json() for v in self.reopens],
            "shreds": [v.to_json() for v in self.shreds],
            "candidates_rejected": [c.to_json() for c in self.rejects],
        }


class DeletionVerdict(StrEnum):
    """For whom the conversation goes (C4)."""

    FOR_THEMSELF = "for_themself"  # a shared conversation: the asker's part only
    FOR_EVERYONE = "for_everyone"  # every participant's part, transcript and key


@dataclass(frozen=True, slots=True)
class PreviewLine:
    """One note or suggestion the deletion touches: its words and why, in one sentence.
    `item` is its id, for faces that show ids (the CLI); the window keeps ids out of sight."""

    item: str
    words: str
    reason: str


@dataclass(frozen=True, slots=True)
class PreviewSection:
    """One list of a person's part, under its heading ("These notes close:")."""

    action: str  # closes, survives, reopens, shreds, rejects
    heading: str
    lines: tuple[PreviewLine, ...]


@dataclass(frozen=True, slots=True)
class PersonPreview:
    """One affected person's part, in words."""

    person: PersonId
    heading: str
    sections: tuple[PreviewSection, ...]


@dataclass(frozen=True, slots=True)
class CascadePreview:
    """The cascade preview (or, once done, what was done), as every face prints it."""

    conversation: ConversationId
    verdict: DeletionVerdict
    done: bool
    sentence: str
    people: tuple[PersonPreview, ...]
    by_person: bool  # several people affected: each one's part under their name
    others_sentence: str | None = None

    def sentences(self) -> tuple[str, ...]:
        """Every sentence of the preview, in reading order (what each face shows)."""
        found = [self.sentence]
        for person in self.people:
            if self.by_person:
                found.append(person.heading)
            for section in person.sections:
                found.append(section.heading)
                found += [part for line in section.lines for part in (line.words, line.reason)]
        if self.others_sentence:
            found.append(self.others_sentence)
        return tuple(found)

    def to_json(self) -> dict[str, Any]:
        """The verdict and the sentences, beside the lists of `ConversationDeletion`."""
        return {
            "verdict": self.verdict.value,
            "sentence": self.sentence,
            "sentences": list(self.sentences()),
        }


def _capital(words: str) -> str:
    return words[:1].upper() + words[1:]


def _said(text: str | None) -> str:
    return f"“{text}”" if text is not None else GONE_TEXT


def _section(action: str, heading: str, notes: Sequence[CascadeNote]) -> PreviewSection:
    lines = tuple(PreviewLine(v.note.id, _said(v.text), _capital(v.reason) + ".") for v in notes)
    return PreviewSection(action, heading, lines)


def person_preview(cascade: Cascade) -> PersonPreview:
    """One person's part in words: what closes and survives always, the rest when any."""
    sections = [
        _section("closes", "These notes close:", cascade.closes),
        _section("survives", "These notes survive:", cascade.survives),
    ]
    if cascade.reopens:
        sections.append(_section("reopens", "These notes reopen:", cascade.reopens))
    if cascade.shreds:
        sections.append(_section("shreds", "These closed notes lose their words:", cascade.shreds))
    if cascade.rejects:
        rejected = tuple(
            PreviewLine(c.id, _said(c.text), f"Rejected: {REJECTED_BECAUSE}.")
            for c in cascade.rejects
        )
        sections.append(PreviewSection("rejects", "These suggestions are rejected:", rejected))
    return PersonPreview(cascade.person, f"For {cascade.person}", tuple(sections))


def cascade_preview(
    conversation: ConversationId,
    named: str,
    people: Sequence[Cascade],
    keeping: Sequence[PersonId],
    others_closing: int,
    *,
    done: bool,
) -> CascadePreview:
    """The preview of deleting a conversation (`done`: the account of having deleted it):
    for the asker (people[0]) alone when others keep it, or for everyone in it."""
    shown = named or "this conversation"
    person = people[0].person
    parts = tuple(person_preview(c) for c in people)
    if keeping:
        others = listed(keeping)
        keeps = verb(len(keeping), "keeps", "keep")
        sentence = (
            f"{_capital(shown)} was deleted for {person}: {person}'s turns are excised from "
            f"it and {person}'s notes from it closed; {others} {keeps} it, with their own "
            "notes and turns."
            if done
            else f"Deleting {shown} for {person} excises {person}'s turns from it and closes "
            f"{person}'s notes from it; {others} {keeps} it, with their own notes and turns."
        )
        return CascadePreview(
            conversation, DeletionVerdict.FOR_THEMSELF, done, sentence, parts, by_person=False
        )
    everyone = f": {listed(c.person for c in people)}" if len(people) > 1 else ""
    sentence = (
        f"{_capital(shown)} was deleted: its transcript and key are gone for everyone in "
        f"it{everyone}."
        if done
        else f"Deleting {shown} removes its transcript and key for everyone in it{everyone}."
    )
    others_sentence = None
    if others_closing:
        close = verb(others_closing, "closes", "close") if not done else "closed"
        others_sentence = f"And {counted(others_closing, 'note')} about other participants {close}."
    return CascadePreview(
        conversation,
        DeletionVerdict.FOR_EVERYONE,
        done,
        sentence,
        parts,
        by_person=len(people) > 1,
        others_sentence=others_sentence,
    )


def for_whom_sentence(named: str, person: PersonId, keeping: Sequence[PersonId]) -> str:
    """The choice staff make for a shared conversation, in words (C4)."""
    shown = named or "this conversation"
    others = listed(keeping)
    return (
        f"{_capital(shown)} is shared with {others}. Deleted for {person}, {person}'s turns "
        f"are excised and {person}'s notes from it close; {others} "
        f"{verb(len(keeping), 'keeps', 'keep')} it. Deleted for everyone, it goes for every "
        "participant, with each one's notes from it."
    )
