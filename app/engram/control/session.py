"""A control session: one store, one resolved person, one actor (C1)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.model.errors import InvalidInput
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


_STAFF_ID = re.compile(r"staff:[A-Za-z0-9._-]{1,64}")


def check_actor(text: str, person: str, one_person_store: bool) -> str:
    """Who may be recorded as acting on `person`'s memory in the inspector: a staff id
    (`staff:` then letters, digits, '.', '_' or '-'), or, on a store that holds only
    them, the person themself. Raises InvalidInput with a sentence saying what to type."""
    typed = text.strip()
    if _STAFF_ID.fullmatch(typed):
        return typed
    if one_person_store and typed == person:
        return typed
    own = f", or {person} if this is your own memory" if one_person_store else ""
    raise InvalidInput(
        f"Type your staff id as staff: followed by letters, digits, '.', '_' or '-' "
        f"(for example staff:dana){own}."
    )
