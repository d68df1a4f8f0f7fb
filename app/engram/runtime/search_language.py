"""The language history search stems in (H1): the one the profile's language note names.

The profile document (M1) records the note that gives a person's language; its text ("Wants
replies in French.") names a language, mapped to a Snowball stemmer by engine.words. The
note is read through the scope filter for the conversation's audience, as any
prompt-facing read is (S1, S2): a private language note does not steer search in a
conversation others read. A conversation's language is known when its participants'
notes name one language between them; otherwise English.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from engram.engine.scope import eligible_scopes
from engram.engine.words import DEFAULT_LANGUAGE, language_named
from engram.model.conversation import ConversationInfo
from engram.model.ids import NoteId, PersonId
from engram.model.scope import Audience, Scope
from engram.runtime.conversations import audience_of
from engram.store import journal, projection_notes, projection_state
from engram.store.store import Store


def person_language(
    store: Store, conn: Any, person: PersonId, scopes: Iterable[Scope]
) -> str | None:
    """The Snowball language of the person's profile language note, if the note is among
    `scopes` and names one; None otherwise."""
    seq = projection_state.profile_seq(conn, person)
    event = journal.event_at(conn, person, seq) if seq is not None else None
    note_id = event.body.get("language") if event is not None else None
    if not note_id:
        return None
    note = projection_notes.eligible_note(conn, person, scopes, NoteId(str(note_id)))
    if note is None:
        return None
    return language_named(journal.texts(store, conn, person, [note.text_seq])[note.text_seq])


def conversation_language(store: Store, conn: Any, info: ConversationInfo) -> str:
    """The language to stem a conversation's messages in: English unless known."""
    named = {
        language
        for person in info.participants
        if (
            language := person_language(
                store, conn, person, eligible_scopes(audience_of(info, person))
            )
        )
    }
    return named.pop() if len(named) == 1 else DEFAULT_LANGUAGE


def own_language(store: Store, conn: Any, person: PersonId) -> str:
    """The language of a person's own view of every conversation of theirs (the
    inspector's person-wide search): English unless their profile names one."""
    scopes = eligible_scopes(Audience.subject_alone(person))
    return person_language(store, conn, person, scopes) or DEFAULT_LANGUAGE


def language_key(conn: Any, people: Sequence[PersonId]) -> tuple[int, ...]:
    """Changes whenever any of these people's journals moves on, so a reader that keeps
    the language knows when to look again (an edited note, a rebuilt profile)."""
    return tuple(projection_state.person_seq(conn, person) for person in people)
