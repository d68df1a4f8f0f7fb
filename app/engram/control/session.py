"""A control session: one store, one resolved person, one actor (C1)."""

from __future__ import annotations

from dataclasses import dataclass

from engram.model.ids import PersonId, person_id
from engram.store import journal
from engram.store.store import Store


@dataclass(frozen=True, slots=True)
class PersonSession:
    """Every control operation acts on `person` only; `actor` is recorded on each change.

    Support staff open a person under their own actor id (e.g. 'staff:dana'); a person
    acting on their own memory is their own actor.
    """

    store: Store
    person: PersonId
    actor: str

    @staticmethod
    def open(store: Store, person: str, actor: str | None = None) -> PersonSession:
        """Resolve the person (NotFound if absent) and bind the actor."""
        resolved = person_id(person)
        with store.read() as conn:
            journal.require_person(conn, resolved)
        return PersonSession(store, resolved, actor or resolved)
