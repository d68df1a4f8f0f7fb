"""Scopes, kinds, durability and audiences (rules S1, P1)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from engram.model.errors import InvalidInput
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


@dataclass(frozen=True, slots=True)
class Audience:
    """The readers of a turn's output, relative to the note's subject."""

    kind: AudienceKind
    subject: PersonId | None = None

    @property
    def private_allowed(self) -> bool:
        """True only when the subject is provably the sole human reader (S2)."""
        return self.kind is AudienceKind.SUBJECT_ALONE

    @staticmethod
    def subject_alone(subject: PersonId) -> Audience:
        """The subject is the only human who can read the output."""
        return Audience(AudienceKind.SUBJECT_ALONE, subject)

    @staticmethod
    def shared(subject: PersonId | None = None) -> Audience:
        """Others besides the subject can read the output."""
        return Audience(AudienceKind.SHARED, subject)

    @staticmethod
    def unknown(subject: PersonId | None = None) -> Audience:
        """Nobody can prove who reads the output."""
        return Audience(AudienceKind.UNKNOWN, subject)


E = TypeVar("E", bound=StrEnum)


def parse_enum(enum: type[E], text: str, what: str) -> E:
    """Parse a user-given enum value with a one-sentence error listing the choices."""
    try:
        return enum(text)
    except ValueError:
        choices = ", ".join(member.value for member in enum)
        raise InvalidInput(f"{text!r} is not a {what}; choose one of: {choices}.") from None
