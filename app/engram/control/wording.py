"""Words shared by every face's sentence builders: counts ("1 conversation", never
"1 conversations" nor "conversation(s)"), and things named by what they mean rather than by
their ids (issue 17 item 13): a note by its words, a conversation by its day and people,
an actor as people would say it."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

SAID_CHARS = 60  # how much of a note's text names it in a sentence


def counted(count: int, one: str, many: str | None = None) -> str:
    """`count` followed by the noun that fits it: `one` for 1, else `many` (by default
    `one` + "s"; give it for "entry"/"entries", "person"/"people")."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def verb(count: int, one: str, many: str) -> str:
    """The verb that agrees with `count` things ("is"/"are", "holds"/"hold")."""
    return one if count == 1 else many


def quoted(text: str | None, limit: int = SAID_CHARS) -> str:
    """A note (or suggestion) named by its words, shortened: “Lives in Grenoble.”"""
    if text is None:
        return "a note whose words were removed"
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return f"“{text}”"


def day(moment: datetime) -> str:
    """A date as people say it: "3 Nov" (with the year when it is not this one)."""
    if moment.year == datetime.now(UTC).year:
        return f"{moment.day} {moment:%b}"
    return f"{moment.day} {moment:%b %Y}"


def listed(names: Iterable[str]) -> str:
    """Names as a sentence lists them: "maya", "maya and sam", "maya, sam and ines"."""
    items = list(names)
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def conversation_named(started: datetime | None, participants: Iterable[str] = ()) -> str:
    """A conversation by its day and people: "the conversation of 3 Nov with maya and sam"
    ("a conversation since deleted" when it is gone)."""
    if started is None:
        return "a conversation since deleted"
    people = listed(sorted(participants))
    return f"the conversation of {day(started)}" + (f" with {people}" if people else "")


# Who did something, as people would say it; the id stays in tooltips and --json.
_ACTORS = {
    "extractor": "the agent's memory engine",
    "runtime": "the agent",
    "maintenance": "routine upkeep",
    "engram": "Engram",
    "operator": "the store's operator",
}


def actor_named(actor: str) -> str:
    """An actor id in words: "staff:dana" → "dana (staff)", "extractor" → "the agent's
    memory engine"; a person's own id stays their name."""
    if actor in _ACTORS:
        return _ACTORS[actor]
    if actor.startswith("staff:"):
        return f"{actor.removeprefix('staff:')} (staff)"
    if actor.startswith("agent:"):
        return f"the agent {actor.removeprefix('agent:')}"
    return actor


def percent(basis_points: int) -> str:
    """A confidence in basis points as people read it: 7500 → "75%"."""
    value = basis_points / 100
    return f"{value:.0f}%" if value == int(value) else f"{value:.2f}".rstrip("0") + "%"
