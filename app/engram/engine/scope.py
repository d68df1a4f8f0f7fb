"""The scope rule (S1-S4): which notes an audience may receive, decided before ranking.

Issue 18 item 12: an audience that may receive private notes is made here, from the
readers of a conversation as the store holds it (`audience_for`), or by the unscoped
accessor's own view (engine.unscoped, inspector only); no caller can widen the filter.
"""

from __future__ import annotations

from engram.engine.ranking import rank
from engram.model.conversation import ConversationInfo
from engram.model.ids import PersonId
from engram.model.notes import Note, PersonMemory
from engram.model.scope import Audience, Scope, _subject_alone

# Surfaces whose readers are a known, listed set of participants. A channel can be read by
# members who never spoke; tasks and schedules have no reader we can prove.
_LISTED_SURFACES = frozenset({"chat"})
_SHARED_SURFACES = frozenset({"channel"})


def eligible_scopes(audience: Audience) -> frozenset[Scope]:
    """S2: private scopes only when the subject alone reads; portable for every audience."""
    return audience.scopes


def is_eligible(note: Note, audience: Audience) -> bool:
    """Whether this audience may receive this note (scope only; relevance is not asked)."""
    return note.scope in audience.scopes


def eligible_ranked(memory: PersonMemory, audience: Audience) -> list[Note]:
    """S1: filter by scope first, then rank; the prompt-facing way to read notes."""
    audience.require_subject(memory.person)
    allowed = audience.scopes
    return rank(note for note in memory._notes.values() if note.scope in allowed)


def audience_for(subject: PersonId, info: ConversationInfo) -> Audience:
    """S3: the audience is who can read the conversation, not who spoke in the turn.

    The readers are the conversation's participants as stored, never a list a caller
    gives (issue 18 item 12). S4: the conversation a note was learned in plays no part
    here; only the readers of the conversation being served do.
    """
    surface = info.surface.value
    if surface in _SHARED_SURFACES:
        return Audience.shared(subject)
    if surface not in _LISTED_SURFACES:
        return Audience.unknown(subject)
    if set(info.participants) == {subject}:
        return _subject_alone(subject)
    return Audience.shared(subject)
