"""A control session: one store, one resolved person, one actor (C1)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.model.errors import InvalidInput
from engram.model.ids import PersonId, person_id
from engram.store import journal
from engram.store.store import Store

# Who may be recorded as acting in a session, on every face (issue 18 item 6): the person
# themself, support staff under their id, a project API key (HTTP) or an agent.
_SESSION_ACTOR = re.compile(r"(?:staff|api):[A-Za-z0-9._-]{1,64}|agent:[A-Za-z0-9][\w.:-]{0,119}")


@dataclass(frozen=True, slots=True)
class PersonSession:
    """Every control operation acts on `person` only; `actor` is recorded on each change.

    Support staff open a person under their own actor id (e.g. 'staff:dana'); a person
    acting on their own memory is their own actor. Every face opens its sessions through
    `open` or `open_new`, which refuse any other actor (C1), so the audit log never records
    one; the engine's own sessions (a cascade, the demo) are made directly.
    """

    store: Store
    person: PersonId
    actor: str

    @staticmethod
    def open(store: Store, person: str, actor: str | None = None) -> PersonSession:
        """Resolve the person (NotFound if absent) and bind the actor, once checked."""
        session = PersonSession.open_new(store, person, actor)
        with store.read() as conn:
            journal.require_person(conn, session.person)
        return session

    @staticmethod
    def open_new(store: Store, person: str, actor: str | None = None) -> PersonSession:
        """A session for a person the store may not hold yet (the write that follows
        creates them); the actor is checked as in `open`."""
        resolved = person_id(person)
        return PersonSession(store, resolved, check_session_actor(actor or resolved, resolved))


_STAFF_ID = re.compile(r"staff:[A-Za-z0-9._-]{1,64}")


def check_session_actor(actor: str, person: str | None) -> str:
    """C1 on every face: `actor` is the person themself, `staff:ID`, `api:KEY` or
    `agent:NAME`; anything else (free text, 5,000 characters, a newline) raises InvalidInput
    with a sentence saying what to give. `person` None: an act on no one person's memory."""
    if actor == person or _SESSION_ACTOR.fullmatch(actor):
        return actor
    if person is None:
        raise InvalidInput(
            "Give who is acting as staff: followed by your staff id (letters, digits, '.', "
            "'_' or '-', for example staff:dana)."
        )
    raise InvalidInput(
        f"Give who is acting as staff: followed by your staff id (letters, digits, '.', '_' "
        f"or '-', for example staff:dana), or as {person} when they act on their own "
        "memory."
    )


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
