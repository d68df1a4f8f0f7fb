"""How the access report names things to the person it is about: actors, times, scopes,
audiences and uses in words, never ids (issue 17 item 14).

The report is addressed to its subject, so their own actions read "you"; staff read
"support staff dana"; Engram's own passes say what they were. Times are local, with the
zone written out, because the person reads them on their own calendar.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from engram.model.conversation import ConversationInfo
from engram.model.ids import PersonId
from engram.model.scope import AudienceKind, Kind, Scope

SCOPE_WORDS = {
    Scope.DIRECT: "private: used only when you alone can read the answer",
    Scope.UNSPECIFIED: "private until you say otherwise: used only when you alone can read",
    Scope.PORTABLE: "shared: may be used whoever reads the answer",
}

SCOPE_SHORT = {Scope.DIRECT: "private", Scope.UNSPECIFIED: "private", Scope.PORTABLE: "shared"}

KIND_WORDS = {
    Kind.FACT: "fact",
    Kind.PREFERENCE: "preference",
    Kind.OPEN_THREAD: "open thread (something still to do)",
    Kind.STYLE: "style (how to answer you)",
}

_ENGRAM_ACTORS = {
    "extractor": "Engram's automatic learning",
    "runtime": "Engram, while an agent answered",
    "maintenance": "Engram's routine upkeep",
    "engram": "Engram",
}

_USES = {
    "assembly": "given to {agent} as background for its answer",
    "recall": "returned to {agent} when it asked to recall what it knows about you",
}


def actor_words(actor: str | None, person: PersonId) -> str:
    """Who acted, in words: "you", "support staff dana", "the agent 'helper'", "sam"."""
    if actor is None or actor == "":
        return "someone unrecorded"
    if actor == person:
        return "you"
    if actor.startswith("staff:"):
        return f"support staff {actor.removeprefix('staff:')}"
    if actor.startswith("agent:"):
        return agent_words(actor.removeprefix("agent:"))
    return _ENGRAM_ACTORS.get(actor, actor)


def agent_words(agent: str | None) -> str:
    """An agent by its name: "the agent 'helper'"."""
    return f"the agent '{agent}'" if agent else "an unnamed agent"


def local_time(moment: datetime, zone: tzinfo | None) -> str:
    """A moment on the reader's clock with its zone: "20 Oct 2026, 21:30 CEST"."""
    here = moment.astimezone(zone)
    return f"{here.day} {here:%b %Y}, {here:%H:%M} {here.tzname() or ''}".rstrip()


def local_day(moment: datetime, zone: tzinfo | None) -> str:
    """A date on the reader's calendar: "20 Oct 2026"."""
    here = moment.astimezone(zone)
    return f"{here.day} {here:%b %Y}"


def people_words(people: list[str]) -> str:
    """ "you", "you and sam", "you, sam and ines"."""
    if len(people) <= 1:
        return "".join(people)
    return ", ".join(people[:-1]) + " and " + people[-1]


def readers_words(info: ConversationInfo, person: PersonId, audience: AudienceKind) -> str:
    """Who could read a conversation's answers (S3), in words."""
    others = [p for p in info.participants if p != person]
    if audience is AudienceKind.SUBJECT_ALONE:
        return "you alone"
    if audience is AudienceKind.SHARED and others:
        return people_words(["you", *others])
    if audience is AudienceKind.SHARED:
        return f"everyone in the {info.surface.value} (a shared place)"
    return "readers Engram could not establish"


def use_words(via: str, agent: str | None) -> str:
    """What a use of a note was: "given to the agent 'helper' as background …"."""
    who = agent_words(agent)
    template = _USES.get(via)
    if template is not None:
        return template.format(agent=who)
    return f"returned to {who} by its tool '{via}'"
