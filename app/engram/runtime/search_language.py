"""The language history search stems in (H1): the one the profile's language note names.

The person's language note (the one the profile document, M1, would pick) has a text
("Wants replies in French.") that names a language, mapped to a Snowball stemmer by
engine.words. The note is read through the scope filter for the conversation's audience, as any
prompt-facing read is (S1, S2): a private language note does not steer search in a
conversation others read. A conversation's language is known when its participants'
notes name one language between them; otherwise English.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram.engine.merge import expired
from engram.engine.words import DEFAULT_LANGUAGE, language_named
from engram.model.conversation import ConversationInfo
from engram.model.ids import PersonId
from engram.model.scope import Audience, Kind
from engram.runtime.context import journal_now
from engram.runtime.conversations import audience_of
from engram.store import journal, projection_notes, projection_state
from engram.store.store import Store

# Style notes looked at for the language one: the profile's pick is the best-ranked, and a
# person has few style notes, so this many always reaches it.
LANGUAGE_CANDIDATES = 64


def person_language(store: Store, conn: Any, audience: Audience) -> str | None:
    """The Snowball language of the audience's subject's language note, if one this
    audience may receive names one; None otherwise.

    The note is the one the profile would pick (M1: the best-ranked active style note on
    language), found at read time rather than in the last rebuilt profile, so a new
    language note changes stemming at once, not after `maintain`; a transient one past
    its four hours no longer counts (M3)."""
    person = audience.subject
    styles = projection_notes.eligible_ranked(
        conn, audience, LANGUAGE_CANDIDATES, frozenset({Kind.STYLE})
    )
    now = journal_now(store, conn, person)
    note = next(
        (n for n in styles if n.topic == "language" and not expired(n, now)),
        None,
    )
    if note is None:
        return None
    return language_named(journal.texts(store, conn, person, [note.text_seq])[note.text_seq])


def conversation_language(store: Store, conn: Any, info: ConversationInfo) -> str:
    """The language to stem a conversation's messages in: English unless known."""
    named = {
        language
        for person in info.participants
        if (language := person_language(store, conn, audience_of(info, person)))
    }
    return named.pop() if len(named) == 1 else DEFAULT_LANGUAGE


def own_language(store: Store, conn: Any, own_view: Audience) -> str:
    """The language of a person's own view of every conversation of theirs (the
    inspector's person-wide search, given the person's own view by control): English
    unless their profile names one."""
    return person_language(store, conn, own_view) or DEFAULT_LANGUAGE


def language_key(conn: Any, people: Sequence[PersonId]) -> tuple[int, ...]:
    """Changes whenever any of these people's journals moves on, so a reader that keeps
    the language knows when to look again (an edited note, a rebuilt profile)."""
    return tuple(projection_state.person_seq(conn, person) for person in people)
