"""What a journal event did, as a sentence of the audit log.

Pure: `describe` reads only the event's clear part. Notes are named by a function the
caller passes: by id for the command line, by their words for the people who read the
inspector's log and the access report (forensics quotes them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engram.control.wording import counted
from engram.model.events import Event, EventType

Name = Callable[[str], str]


def describe(event: Event, first: Name = lambda n: f"note {n}", other: Name = str) -> str:
    """What an event did. Notes are named by `first` where a sentence starts with one and
    by `other` after that: by id ("note n_1 corrected as n_2"), or, for people, by their
    words (control.forensics)."""
    body = event.body
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
            return (
                f"conversation {body['conversation']} deleted: "
                f"{counted(len(body.get('closed', [])), 'note')} closed"
            )
        case EventType.REOPENED:
            return (
                f"{first(body['note'])} reopened: {other(body['after'])}, which contradicted "
                "it, went"
            )
        case EventType.ITEM_USED:
            return f"{counted(len(body['notes']), 'note')} used via {body.get('via', 'assembly')}"
        case EventType.UNDONE:
            return _describe_undo(body, first, other)
        case EventType.EXPORTED:
            return _describe_export(body)
        case _:
            return event.type.value.replace("_", " ")


def _describe_undo(body: Any, first: Name, other: Name) -> str:
    undid = f"undid event {body['undoes']}"

    def back(name: Name) -> str:
        restored, new = name(body["restored"]), other(body["new"])
        # Reopened in place (issue 17 item 4), or a new version reading the same.
        if body["new"] == body["restored"] or new == restored:
            return f"{restored} restored"
        return f"{restored} restored as {new}"

    match body["action"]:
        case "edit":
            return f"{undid} (an edit): {first(body['note'])} closed, {back(other)}"
        case "rescope":
            return f"{undid} (a change of scope): {first(body['note'])} back to {body['scope']}"
        case _:
            return f"{undid} (a deletion): {back(first)}"


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
