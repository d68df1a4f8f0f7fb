"""What a journal event did, as a sentence of the audit log.

Pure: `describe` reads only the event's clear part. Notes and suggestions are named by
functions the caller passes: by id for the command line, by their words for the people who
read the inspector's log and the access report (forensics quotes them). With `people`, the
rest of a sentence carries no ids either (issue 17 item 13): no event numbers, no
conversation ids, no words of the machinery ("assembly", "extraction checkpoint").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engram.control.wording import counted
from engram.model.events import Event, EventType

Name = Callable[[str], str]


# What the agent did with notes it used, by `via` (people's words; the CLI says `via`).
_USED = {
    "assembly": "put in what the agent saw for a turn",
    "recall": "returned to the agent when it recalled memory",
    "search": "found by the agent's memory search",
}
# Events that need no name, in people's words.
_PLAIN = {
    EventType.EXTRACTION_CHECKPOINT: "noted which turns were already learned from",
    EventType.DIGEST_LINE_ADDED: "summed up a conversation for the recent-conversations list",
    EventType.PROFILE_REBUILT: "rebuilt the profile (language, tone and preferences)",
}


def describe(
    event: Event,
    first: Name = lambda n: f"note {n}",
    other: Name = str,
    *,
    candidate: Name = lambda c: f"candidate {c}",
    people: bool = False,
) -> str:
    """What an event did. Notes are named by `first` where a sentence starts with one and
    by `other` after that, suggestions by `candidate`: by id ("note n_1 corrected as n_2"),
    or, for `people`, by their words (control.forensics)."""
    body = event.body
    if people and event.type in _PLAIN:
        return _PLAIN[event.type]
    match event.type:
        case EventType.NOTE_ADDED:
            kind = str(body["kind"]).replace("_", " ")
            return f"added {kind} {first(body['note'])} ({body['scope']})"
        case EventType.RESTATED:
            return f"restated {first(body['note'])}"
        case EventType.CONTRADICTED:
            return f"{first(body['old'])} contradicted by {other(body['new'])}"
        case EventType.CORRECTED:
            return f"{first(body['old'])} corrected as {other(body['note'])}"
        case EventType.SCOPE_CHANGED:
            return f"{first(body['note'])} made {body['scope']}"
        case EventType.DELETED:
            return f"deleted {first(body['note'])}"
        case EventType.RETIRED:
            return f"retired {first(body['note'])}, a passing note whose time was up"
        case EventType.DUPLICATE_REMOVED:
            return f"removed {first(body['note'])}, a duplicate of {other(body['kept'])}"
        case EventType.MERGED:
            return f"{counted(len(body['merged']), 'note')} merged into {other(body['into'])}"
        case EventType.CONVERSATION_DELETED:
            closed = counted(len(body.get("closed", [])), "note")
            if body.get("kept_by_others"):  # C4: deleted for one person, the others keep it
                return f"deleted their part of a shared conversation (their turns): {closed} closed"
            if people:  # its day and people went with it
                return f"deleted a conversation (its transcript and key): {closed} closed"
            return f"conversation {body['conversation']} deleted: {closed} closed"
        case EventType.REOPENED:
            return (
                f"{first(body['note'])} reopened: {other(body['after'])}, which contradicted "
                "it, went"
            )
        case EventType.ITEM_USED:
            notes, via = counted(len(body["notes"]), "note"), str(body.get("via", "assembly"))
            if people:
                return f"{notes} {_USED.get(via, 'used by the agent')}"
            return f"{notes} used via {via}"
        case EventType.CANDIDATE_SUGGESTED:
            named = candidate(body["candidate"])
            return f"suggested remembering {named}" if people else f"suggested {named}"
        case EventType.CANDIDATE_REVIEWED:
            decision = str(body.get("decision", "reviewed"))
            named = candidate(body["candidate"])
            return f"{decision} the suggestion {named}" if people else f"{decision} {named}"
        case EventType.CANDIDATE_APPLIED:
            named = candidate(body["candidate"])
            return f"applied the suggestion {named} as a note" if people else f"applied {named}"
        case EventType.UNDONE:
            return _describe_undo(body, first, other, people)
        case EventType.EXPORTED:
            return _describe_export(body)
        case _:
            return event.type.value.replace("_", " ")


def _describe_undo(body: Any, first: Name, other: Name, people: bool) -> str:
    undid = "undid" if people else f"undid event {body['undoes']}"

    def back(name: Name) -> str:
        restored, new = name(body["restored"]), other(body["new"])
        # Reopened in place (issue 17 item 4), or a new version reading the same.
        if body["new"] == body["restored"] or new == restored:
            return f"{restored} restored"
        return f"{restored} restored as {new}"

    match body["action"]:
        case "edit":
            return f"{undid} {_AN['edit'][people]}: {first(body['note'])} closed, {back(other)}"
        case "rescope":
            return (
                f"{undid} {_AN['rescope'][people]}: {first(body['note'])} back to {body['scope']}"
            )
        case _:
            return f"{undid} {_AN['delete'][people]}: {back(first)}"


# What an undone change was: (for the command line, after its number; for people).
_AN = {
    "edit": ("(an edit)", "an edit"),
    "rescope": ("(a change of scope)", "a change of scope"),
    "delete": ("(a deletion)", "a deletion"),
}


# What an `exported` event says: (done, attempted) for each kind of file a person takes away.
_EXPORTS = {
    "export": ("exported everything kept, as JSON,", "exporting everything kept, as JSON,"),
    "access_report": ("saved an access report (PDF)", "saving an access report (PDF)"),
}
_TO = {"file": "to a file", "stdout": "to standard output"}


def _describe_export(body: Any) -> str:
    what = str(body.get("what"))
    done, attempted = _EXPORTS.get(what, (f"exported {what}", f"exporting {what}"))
    to = _TO.get(str(body.get("to")), f"to {body.get('to')}")
    if body.get("failed"):
        return f"{attempted} {to} failed after it was recorded: nothing was written"
    return f"{done} {to}"
