"""Journal events: one append-only journal per person, folded into notes.

An event's clear part (type, time, actor, cause, body) is chained and queryable; its body is
typed (model/event_bodies.py) and JSON only at the store's seam. Free text
(note text, reasons, profile, digest lines) travels beside it as a sealed payload, which the
fold never needs: notes point at the event whose payload holds their text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from engram.model.event_bodies import BODY_CLASSES, EventBody, PersonCreated
from engram.model.event_parts import TEXT_BEARING, Cause, EventType
from engram.model.ids import ConversationId, PersonId

__all__ = ["TEXT_BEARING", "Cause", "Event", "EventBody", "EventType", "NewEvent"]


def _check_body(type_: EventType, body: EventBody) -> None:
    """An event carries its own type's body (model/event_bodies.py), or is not made."""
    if not isinstance(body, BODY_CLASSES[type_]):
        raise TypeError(f"a {type_.value} event needs a {BODY_CLASSES[type_].__name__} body")


@dataclass(frozen=True, slots=True)
class Event:
    """One committed journal event, as the fold sees it (no free text)."""

    person: PersonId
    seq: int
    at: datetime
    actor: str
    type: EventType
    body: EventBody = field(default_factory=PersonCreated)
    cause: Cause | None = None
    has_payload: bool = False

    def __post_init__(self) -> None:
        _check_body(self.type, self.body)


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event about to be appended: the store gives it a seq, a time and a chain link.

    `text` is sealed; `text_origin` names the conversation whose key must also be held to
    read it (C4): note text learned in a conversation dies with that conversation.
    """

    type: EventType
    actor: str
    body: EventBody = field(default_factory=PersonCreated)
    cause: Cause | None = None
    text: str | None = None
    text_origin: ConversationId | None = None

    def __post_init__(self) -> None:
        _check_body(self.type, self.body)
