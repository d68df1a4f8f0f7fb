"""The scope rule (S1-S4): which notes an audience may receive, decided before ranking."""

from __future__ import annotations

from collections.abc import Collection

from engram.engine.ranking import rank
from engram.model.ids import PersonId
from engram.model.notes import Note, PersonMemory
from engram.model.scope import Audience, Scope

_ALL = frozenset(Scope)
_PORTABLE_ONLY = frozenset({Scope.PORTABLE})

# Surfaces whose readers are a known, listed set of participants. A channel can be read by
# members who never spoke; tasks and schedules have no reader we can prove.
_LISTED_SURFACES = frozenset({"chat"})
_SHARED_SURFACES = frozenset({"channel"})


def eligible_scopes(audience: Audience) -> frozenset[Scope]:
    """S2: private scopes only when the subject alone reads; portable for every audience."""
    return _ALL if audience.private_allowed else _PORTABLE_ONLY


def is_eligible(note: Note, audience: Audience) -> bool:
    """Whether this audience may receive this note (scope only; relevance is not asked)."""
    return note.scope in eligible_scopes(audience)


def eligible_ranked(memory: PersonMemory, audience: Audience) -> list[Note]:
    """S1: filter by scope first, then rank; the prompt-facing way to read notes."""
    allowed = eligible_scopes(audience)
    return rank(note for note in memory._notes.values() if note.scope in allowed)


def audience_for(
    subject: PersonId, readers: Collection[PersonId] | None, surface: str | None
) -> Audience:
    """S3: the audience is who can read the conversation, not who spoke in the turn.

    S4: the conversation a note was learned in plays no part here; only the readers of the
    conversation being served do.
    """
    if surface in _SHARED_SURFACES:
        return Audience.shared(subject)
    if readers is None or surface not in _LISTED_SURFACES:
        return Audience.unknown(subject)
    if set(readers) == {subject}:
        return Audience.subject_alone(subject)
    return Audience.shared(subject)
