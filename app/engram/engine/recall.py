"""Recall (R1-R2): the same fold, scope rule and ranking as assembly, no query."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from engram.engine.assembly import MAX_DIGEST_LINES, TextNote
from engram.model.errors import InvalidInput
from engram.model.scope import Audience

DEFAULT_LIMIT = 12
MAX_LIMIT = 25
LIMIT_TOO_LOW = "'limit' must be at least 1; leave it out for the default."

NOTHING_KEPT = "nothing has been kept about this person yet"
NOT_READABLE = (
    "your notes aren't readable right now, so nothing was recalled; carry on from what this "
    "conversation already tells you — the rest of the turn works normally"
)
RESTRICTED = (
    "others can read this conversation, so only notes the person made portable can be "
    "recalled here; private memory is not available to this audience"
)


class RecallStatus(StrEnum):
    """Which of the distinct answers recall gave (R2)."""

    OK = "ok"
    EMPTY = "empty"
    RESTRICTED = "restricted"
    UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True)
class RecallResult:
    """What memory_recall returns."""

    status: RecallStatus
    notes: tuple[TextNote, ...]
    digest: tuple[str, ...]
    message: str | None


def nothing_kept(writer: str | None) -> str:
    """R2's empty answer, naming the writing tool this agent really has, or none."""
    if writer is None:
        return NOTHING_KEPT
    return f"{NOTHING_KEPT} — {writer} is how a note gets here"


def clamp_limit(limit: int | None) -> int:
    """12 by default, 25 at most (R1)."""
    if limit is None:
        return DEFAULT_LIMIT
    if limit < 1:
        raise InvalidInput(LIMIT_TOO_LOW)
    return min(limit, MAX_LIMIT)


def recall(
    ranked: Sequence[TextNote],
    digest: Sequence[str],
    audience: Audience,
    *,
    readable: bool = True,
    limit: int | None = None,
    writer: str | None = None,
) -> RecallResult:
    """Answer memory_recall from already scope-filtered, ranked notes (R1, R2). `writer` is
    the tool this agent may write notes with, named in the empty answer (None: it has none)."""
    if not readable:
        # R2: a failed read never reads as empty.
        return RecallResult(RecallStatus.UNREADABLE, (), (), NOT_READABLE)
    count = clamp_limit(limit)
    notes = tuple(ranked[:count])
    lines = tuple(digest[:MAX_DIGEST_LINES])
    if not audience.private_allowed:
        # Said whether or not private notes exist, so the answer reveals nothing.
        return RecallResult(RecallStatus.RESTRICTED, notes, lines, RESTRICTED)
    if not notes and not lines:
        return RecallResult(RecallStatus.EMPTY, (), (), nothing_kept(writer))
    return RecallResult(RecallStatus.OK, notes, lines, None)
