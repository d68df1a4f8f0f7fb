"""The people in a store, with counts (a count reveals no note's scope or content)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engram.model.errors import StateConflict
from engram.model.ids import PersonId, person_id
from engram.model.notes import NoteFilter
from engram.store import conversation_log, journal, people, projection_notes
from engram.store.store import Store


@dataclass(frozen=True, slots=True)
class PersonSummary:
    """One row of the people list."""

    id: PersonId
    active_notes: int
    all_notes: int
    conversations: int

    def to_json(self) -> dict[str, Any]:
        """As printed by `engram persons --json`."""
        return {
            "id": self.id,
            "active_notes": self.active_notes,
            "notes": self.all_notes,
            "conversations": self.conversations,
        }


def list_persons(store: Store) -> list[PersonSummary]:
    """Everyone in the store, by id."""
    with store.read() as conn:
        return [
            PersonSummary(
                person,
                projection_notes.count_notes(conn, person, NoteFilter()),
                projection_notes.count_notes(conn, person),
                len(conversation_log.for_person(conn, person)),
            )
            for person in people.all_ids(conn)
        ]


def ensure_person(store: Store, person: str, actor: str = "engram") -> PersonId:
    """The person, created first if the store does not hold them (an app's new user)."""
    resolved = person_id(person)
    with store.write() as txn:
        journal.ensure_person(store, txn, resolved, actor=actor)
    return resolved


def add_person(store: Store, person: str, actor: str) -> PersonId:
    """A new person, created under `actor` (Person > Add person…); StateConflict when the
    store already holds them, so adding never silently opens someone else's memory."""
    resolved = person_id(person)
    with store.write() as txn:
        if not journal.ensure_person(store, txn, resolved, actor=actor):
            raise StateConflict(f"{resolved} is already in this store; choose them in the list.")
    return resolved
