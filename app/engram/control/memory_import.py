"""Memories kept elsewhere come in as candidates for review (issue 21 item 10).

A list copied out of another assistant's memory page, a Markdown file of them, or mem0's
export (runtime/memory_formats.py reads them) never becomes notes by itself: each memory
is one pending candidate, private to the person, with where it came from sealed with its
words (the file's name, its format, the line or mem0's id, the heading it sat under, when
it was imported), so it waits in the review queue like what learning suggests. A memory
the person's notes or candidates already say (the same words, case and spacing aside), or
one the file says twice, is skipped and counted, so importing a file again adds nothing.
Sensitive ones carry their category as any candidate does (P5). The file is read and
checked whole before anything is written, and written in one transaction: all of it or
none of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engram.control import candidates
from engram.control.candidate_review import duplicates_of
from engram.control.session import PersonSession
from engram.control.wording import counted
from engram.model.clock import iso
from engram.model.errors import InvalidInput
from engram.model.events import NewEvent
from engram.model.ids import CandidateId
from engram.model.scope import Kind, Scope
from engram.runtime.legacy_import import guess_kind
from engram.runtime.memory_formats import FORMATS, Memory, read_memories
from engram.runtime.note_writes import NoteDraft, read_suggestion, suggestion
from engram.runtime.sensitive_lexicon import sensitive_category
from engram.store import journal, projection_state
from engram.store.store import WriteTxn

EXTRACTOR = "memory-import"  # what a candidate says suggested it
MAX_FILE_BYTES = 1_000_000
MAX_MEMORIES = 1_000
CONFIDENCE_BP = 5_000  # nobody said it here: a reviewer's starting point, no more
_SKIPPED = {
    "note": "a note already says it",
    "candidate": "a candidate already says it",
    "file": "the file said it before",
}


@dataclass(frozen=True, slots=True)
class PlannedMemory:
    """One memory of the file and what the import does with it."""

    text: str
    kind: str
    where: dict[str, Any]
    category: str | None = None  # the sensitive category (P5), when it touches one
    duplicate_of: str | None = None  # "note", "candidate" or "file": skipped, and why

    @property
    def skipped(self) -> str:
        """Why it is skipped, in words ("" when it is added)."""
        return _SKIPPED.get(self.duplicate_of or "", "")

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "kind": self.kind,
            "where": self.where,
            "category": self.category,
            "duplicate_of": self.duplicate_of,
        }


@dataclass(slots=True)
class MemoryImport:
    """What importing a file adds, skips and ignores (a preview until `added` is filled)."""

    file: str
    format: str
    source: str | None
    planned: list[PlannedMemory]
    ignored: int
    added: list[str] = field(default_factory=list)  # the candidates made, once imported

    @property
    def to_add(self) -> list[PlannedMemory]:
        return [p for p in self.planned if p.duplicate_of is None]

    @property
    def duplicates(self) -> list[PlannedMemory]:
        return [p for p in self.planned if p.duplicate_of is not None]

    def summary(self, done: bool) -> str:
        """What the import did (or, before, will do), in one sentence."""
        verb = "added" if done else "to add"
        count = len(self.added) if done else len(self.to_add)
        return (
            f"{counted(count, 'candidate')} {verb} for review, "
            f"{counted(len(self.duplicates), 'duplicate')} skipped, "
            f"{self.ignored} empty or ignored."
        )

    def to_json(self, done: bool) -> dict[str, Any]:
        return {
            "file": self.file,
            "format": self.format,
            "source": self.source,
            "added": len(self.added) if done else len(self.to_add),
            "duplicates": len(self.duplicates),
            "ignored": self.ignored,
            "candidates": self.added,
            "memories": [p.to_json() for p in self.planned],
            "summary": self.summary(done),
        }


def read_file(path: str | Path) -> str:
    """The file's text, refused in one sentence when too big, missing or not UTF-8."""
    target = Path(path)
    try:
        size = target.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InvalidInput(
                f"{target.name} is {size:,} bytes; a memory file may be at most "
                f"{MAX_FILE_BYTES:,}, so split it; nothing was imported."
            )
        return target.read_bytes().decode("utf-8")
    except OSError as error:
        raise InvalidInput(f"Cannot read {target} ({error.strerror or error}).") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{target.name} is not UTF-8 text; nothing was imported.") from None


def preview_memories(
    session: PersonSession,
    path: str | Path,
    file_format: str | None = None,
    source: str | None = None,
) -> MemoryImport:
    """What importing the file would add, skip and ignore; nothing is written."""
    if file_format is not None and file_format not in FORMATS:
        raise InvalidInput(f"{file_format!r} is not a memory format; use {', '.join(FORMATS)}.")
    name = Path(path).name
    found = read_memories(read_file(path), name, file_format)
    if len(found.memories) > MAX_MEMORIES:
        raise InvalidInput(
            f"{name} holds {len(found.memories):,} memories; at most {MAX_MEMORIES:,} are "
            "imported at once, so split it; nothing was imported."
        )
    exists = _person_exists(session)
    known = _known_texts(session) if exists else {}
    planned: list[PlannedMemory] = []
    for memory in found.memories:
        planned.append(_planned(session, memory, known, exists))
        known.setdefault(_same(memory.text), "file")
    cleaned = " ".join((source or "").split()) or None
    return MemoryImport(name, found.format, cleaned, planned, found.ignored)


def import_memories(
    session: PersonSession,
    path: str | Path,
    file_format: str | None = None,
    source: str | None = None,
    *,
    create_person: bool = False,
) -> MemoryImport:
    """Add the file's new memories as pending candidates for the session's person, in one
    write; what was added, skipped and ignored. With `create_person`, a person the store
    has not seen yet is created in the same write."""
    plan = preview_memories(session, path, file_format, source)
    store, person = session.store, session.person
    imported_at = iso(store.now()) or ""
    with store.write() as txn:
        if create_person:
            journal.ensure_person(store, txn, person, actor=session.actor)
        else:
            journal.require_person(txn.conn, person)
        # Held before looking again: an import of the same file in another window or
        # process that committed meanwhile makes these duplicates, not twins.
        journal.lock(txn, person)
        taken = _candidate_texts(session, txn)
        plan.planned = [
            replace(p, duplicate_of="candidate")
            if p.duplicate_of is None and _same(p.text) in taken
            else p
            for p in plan.planned
        ]
        made = [_suggested(session, plan, memory, imported_at) for memory in plan.to_add]
        if made:
            journal.append(store, txn, person, [event for _, event in made])
    plan.added = [str(candidate) for candidate, _ in made]
    return plan


def _suggested(
    session: PersonSession, plan: MemoryImport, memory: PlannedMemory, imported_at: str
) -> tuple[CandidateId, NewEvent]:
    """The pending candidate one memory becomes, with where it came from sealed with it."""
    where = {
        "file": plan.file,
        "format": plan.format,
        **({"source": plan.source} if plan.source else {}),
        **memory.where,
        "imported_at": imported_at,
    }
    draft = NoteDraft(memory.text, Kind(memory.kind), Scope.DIRECT, confidence_bp=CONFIDENCE_BP)
    return suggestion(
        draft,
        session.actor,
        EXTRACTOR,
        None,
        sensitive=memory.category is not None,
        ambiguous=False,  # nothing hedged it; a person decides on every one all the same
        category=memory.category,
        imported=where,
    )


def _candidate_texts(session: PersonSession, txn: WriteTxn) -> set[str]:
    """The words of every candidate the person has, read inside the write."""
    states = projection_state.candidates(txn.conn, session.person, None)
    sealed = journal.texts(session.store, txn.conn, session.person, [s.payload_seq for s in states])
    return {_same(read_suggestion(t).text) for t in sealed.values() if t is not None}


def _planned(
    session: PersonSession, memory: Memory, known: dict[str, str], exists: bool
) -> PlannedMemory:
    detected = sensitive_category(memory.text)  # P5, as learning decides it
    twin = known.get(_same(memory.text))
    if twin is None and exists and duplicates_of(session, {"text": memory.text}):
        twin = "note"  # an active note says it already
    return PlannedMemory(
        memory.text,
        guess_kind(memory.text).value,
        memory.where,
        detected.value if detected else None,
        twin,
    )


def _known_texts(session: PersonSession) -> dict[str, str]:
    """The person's candidates (whatever was decided on them), by their words."""
    return {
        _same(c["text"]): "candidate" for c in candidates.list_candidates(session) if c.get("text")
    }


def _person_exists(session: PersonSession) -> bool:
    with session.store.read() as conn:
        return journal.person_exists(conn, session.person)


def _same(text: str | None) -> str:
    return " ".join((text or "").casefold().split())
