"""What every journal event body is (`EventBody`), and the helpers the body classes share
to write and read their JSON: an optional key is left out when it has no value.

The classes themselves are in `note_bodies` (events that change notes) and `record_bodies`
(everything else the journal records); `event_bodies` is their one catalogue.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any, Self

from engram.model.event_parts import Cause
from engram.model.ids import ConversationId, NoteId, TurnId

Json = dict[str, Any]


class EventBody(ABC):
    """What one event says, in its own type's terms."""

    __slots__ = ()

    @abstractmethod
    def to_json(self) -> Json:
        """The body as the journal stores it (before canonical encoding)."""

    @classmethod
    @abstractmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """The body a stored JSON object holds (any variant still on disk)."""

    def named_notes(self) -> tuple[NoteId, ...]:
        """The notes this event is about, one by one (not the lists it carries), in the
        order note, old, new, restored, after, kept, into."""
        return ()

    def listed_notes(self) -> tuple[NoteId, ...]:
        """The notes the lists this event carries name (merged, closed, used, …)."""
        return ()


def put(data: Json, key: str, value: Any) -> Json:
    """Set `key` unless `value` is None (an optional key the writers leave out)."""
    if value is not None:
        data[key] = value.value if isinstance(value, Enum) else value
    return data


def optional_note(data: Mapping[str, Any], key: str) -> NoteId | None:
    """The note a key names, or None where it is absent (or empty)."""
    value = data.get(key)
    return NoteId(str(value)) if value else None


def note_ids(values: Iterable[Any] | None) -> tuple[NoteId, ...]:
    """A stored list of note ids (an absent list: none)."""
    return tuple(NoteId(str(v)) for v in values or ())


def cause_of(value: Any) -> Cause | None:
    """A stored source ({"conversation", "turn"}), or None where there is none."""
    if not value:
        return None
    turn = value.get("turn")
    return Cause(ConversationId(value["conversation"]), TurnId(turn) if turn else None)


def cause_json(cause: Cause | None) -> Json | None:
    """A source as it is stored (None: the key is left out)."""
    return cause.to_json() if cause is not None else None


def present(*notes: NoteId | None) -> tuple[NoteId, ...]:
    """The notes given, without the absent ones."""
    return tuple(n for n in notes if n)
