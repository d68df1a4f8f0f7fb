"""Scopes, kinds, durability and audiences (rules S1, P1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from engram.model.errors import InvalidInput, NotAllowed
from engram.model.ids import PersonId


class Scope(StrEnum):
    """Who a note may reach (S1). Direct and unspecified are private; portable is not."""

    DIRECT = "direct"
    UNSPECIFIED = "unspecified"
    PORTABLE = "portable"

    @property
    def is_private(self) -> bool:
        """Private scopes need an audience of the subject alone (S2)."""
        return self is not Scope.PORTABLE

    @property
    def scope_class(self) -> str:
        """The class merges must not cross (F4): 'private' or 'portable'."""
        return "private" if self.is_private else "portable"


class Kind(StrEnum):
    """What a note is (P1)."""

    FACT = "fact"
    PREFERENCE = "preference"
    OPEN_THREAD = "open_thread"
    STYLE = "style"


class Durability(StrEnum):
    """Transient notes retire after four hours (M3); lasting notes never expire by age."""

    TRANSIENT = "transient"
    LASTING = "lasting"


class AudienceKind(StrEnum):
    """Who can read a conversation's output (S3)."""

    SUBJECT_ALONE = "subject_alone"
    SHARED = "shared"
    UNKNOWN = "unknown"


_ALL_SCOPES = frozenset(Scope)
_PORTABLE_ONLY = frozenset({Scope.PORTABLE})


@dataclass(frozen=True, slots=True)
class _Seal:
    """Proof that an audience of the subject alone was made by one of its two makers, for
    this subject: engine.scope.audience_for (a conversation's real readers, S3) or
    engine.unscoped.unscoped_audience (the person's own view, S5). Nothing else holds one."""

    subject: PersonId


@dataclass(frozen=True, slots=True)
class Audience:
    """The readers of a turn's output, relative to the note's subject.

    Issue 18 item 12: no caller can widen it. A shared or unknown audience (portable notes
    only) is made with `Audience.shared` / `Audience.unknown` / `Audience.restricted`; an
    audience of the subject alone (every scope) cannot be made by hand, nor copied onto
    another subject (`dataclasses.replace` keeps the seal, which names its subject)."""

    kind: AudienceKind
    subject: PersonId
    _seal: _Seal | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind is AudienceKind.SUBJECT_ALONE and (
            not isinstance(self._seal, _Seal) or self._seal.subject != self.subject
        ):
            raise NotAllowed(
                "An audience of the subject alone comes from the readers of a conversation "
                "or from the person's own view, never from a caller (S2, S5)."
            )

    @property
    def private_allowed(self) -> bool:
        """True only when the subject is provably the sole human reader (S2)."""
        return self.kind is AudienceKind.SUBJECT_ALONE

    @property
    def scopes(self) -> frozenset[Scope]:
        """S2: private scopes only when the subject alone reads; portable for every audience."""
        return _ALL_SCOPES if self.private_allowed else _PORTABLE_ONLY

    def require_subject(self, person: PersonId) -> None:
        """Refuse to read one person's notes for another person's audience."""
        if self.subject != person:
            raise NotAllowed(f"This audience is {self.subject}'s, not {person}'s.")

    @staticmethod
    def shared(subject: PersonId) -> Audience:
        """Others besides the subject can read the output."""
        return Audience(AudienceKind.SHARED, subject)

    @staticmethod
    def unknown(subject: PersonId) -> Audience:
        """Nobody can prove who reads the output."""
        return Audience(AudienceKind.UNKNOWN, subject)

    @staticmethod
    def restricted(kind: AudienceKind, subject: PersonId) -> Audience:
        """A shared or unknown audience of this kind; the subject alone is refused."""
        return Audience(kind, subject)


def _subject_alone(subject: PersonId) -> Audience:
    """The subject is the only human who can read the output. Private to its two makers
    (engine.scope.audience_for, engine.unscoped.unscoped_audience); tests/unit/test_scope.py
    fails on any other module naming it."""
    return Audience(AudienceKind.SUBJECT_ALONE, subject, _Seal(subject))


E = TypeVar("E", bound=StrEnum)


def parse_enum(enum: type[E], text: str, what: str) -> E:
    """Parse a user-given enum value with a one-sentence error listing the choices."""
    try:
        return enum(text)
    except ValueError:
        choices = ", ".join(member.value for member in enum)
        raise InvalidInput(f"{text!r} is not a {what}; choose one of: {choices}.") from None
