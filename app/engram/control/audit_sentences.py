"""What a journal event did, as a sentence of the audit log.

Pure: `describe` reads only the event's clear part. Notes and suggestions are named by
functions the caller passes: by id for the command line, by their words for the people who
read the inspector's log and the access report (forensics quotes them). With `people`, the
rest of a sentence carries no ids either (issue 17 item 13): no event numbers, no
conversation ids, no words of the machinery ("assembly", "extraction checkpoint").
"""

from __future__ import annotations

from collections.abc import Callable

from engram.control.wording import counted
from engram.model.event_bodies import (
    CandidateApplied,
    CandidateReviewed,
    CandidateSuggested,
    Contradicted,
    ConversationDeleted,
    Corrected,
    Deleted,
    DuplicateRemoved,
    Exported,
    ItemUsed,
    Merged,
    NoteAdded,
    Reopened,
    Restated,
    Retired,
    ReviewCopyMade,
    ReviewImported,
    ScopeChanged,
    Undone,
)
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
    match body:
        case NoteAdded():
            kind = body.kind.value.replace("_", " ")
            return f"added {kind} {first(body.note)} ({body.scope})"
        case Restated():
            return f"restated {first(body.note)}"
        case Contradicted():
            return f"{first(body.old)} contradicted by {other(body.new)}"
        case Corrected():
            return f"{first(body.old)} corrected as {other(body.note)}"
        case ScopeChanged():
            return f"{first(body.note)} made {body.scope}"
        case Deleted(shredded=shredded) if shredded:  # issue 21 item 7
            return f"forgot {first(body.note)}: deleted it and erased its words"
        case Deleted():
            return f"deleted {first(body.note)}"
        case Retired():
            return f"retired {first(body.note)}, a passing note whose time was up"
        case DuplicateRemoved():
            return f"removed {first(body.note)}, a duplicate of {other(str(body.kept))}"
        case Merged():
            return f"{counted(len(body.merged), 'note')} merged into {other(body.into)}"
        case ConversationDeleted():
            closed = counted(len(body.closed), "note")
            if body.kept_by_others:  # C4: deleted for one person, the others keep it
                return f"deleted their part of a shared conversation (their turns): {closed} closed"
            if people:  # its day and people went with it
                return f"deleted a conversation (its transcript and key): {closed} closed"
            return f"conversation {body.conversation} deleted: {closed} closed"
        case Reopened():
            return f"{first(body.note)} reopened: {other(body.after)}, which contradicted it, went"
        case ItemUsed():
            notes, via = counted(len(body.notes), "note"), body.via_name
            if people:
                return f"{notes} {_USED.get(via, 'used by the agent')}"
            return f"{notes} used via {via}"
        case CandidateSuggested():
            named = candidate(body.candidate)
            return f"suggested remembering {named}" if people else f"suggested {named}"
        case CandidateReviewed():
            named = candidate(body.candidate)
            return (
                f"{body.decision} the suggestion {named}" if people else f"{body.decision} {named}"
            )
        case CandidateApplied():
            named = candidate(body.candidate)
            return f"applied the suggestion {named} as a note" if people else f"applied {named}"
        case Undone():
            return _describe_undo(body, first, other, people, candidate)
        case Exported():
            return _describe_export(body)
        case ReviewCopyMade():
            return f"review copy taken {body.taken_at[:10]}, through entry {body.through}"
        case ReviewImported():
            return _describe_review(body, first, candidate)
        case _:
            return event.type.value.replace("_", " ")


def _describe_undo(body: Undone, first: Name, other: Name, people: bool, candidate: Name) -> str:
    undid = "undid" if people else f"undid event {body.undoes}"
    if body.candidate is not None:  # a decision on a suggestion (issue 21 item 8)
        named = candidate(body.candidate)
        what = "the rejection of" if body.action == "reject" else "the approval of"
        if body.note is None:
            return f"{undid} {what} {named}: it is pending again"
        if body.restatement is not None:
            return f"{undid} {what} {named}: {first(str(body.note))} loses that restatement"
        return f"{undid} {what} {named}: {first(str(body.note))} removed, the suggestion pending"

    def back(name: Name) -> str:
        restored, new = name(str(body.restored)), other(str(body.new))
        # Reopened in place (issue 17 item 4), or a new version reading the same.
        if body.new == body.restored or new == restored:
            return f"{restored} restored"
        return f"{restored} restored as {new}"

    match body.action:
        case "edit":
            return f"{undid} {_AN['edit'][people]}: {first(str(body.note))} closed, {back(other)}"
        case "rescope":
            return f"{undid} {_AN['rescope'][people]}: {first(str(body.note))} back to {body.scope}"
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
    "review_copy": (
        "made a review copy (sealed under the reviewer's passphrase)",
        "making a review copy",
    ),
    "audit_csv": ("saved audit log entries as CSV", "saving audit log entries as CSV"),
}
_TO = {"file": "to a file", "stdout": "to standard output"}


def _describe_export(body: Exported) -> str:
    what = body.what
    done, attempted = _EXPORTS.get(what, (f"exported {what}", f"exporting {what}"))
    to = _TO.get(body.to, f"to {body.to}")
    if body.failed:
        return f"{attempted} {to} failed after it was recorded: nothing was written"
    return f"{done} {to}"


# What a reviewer's decision was, in the words of the audit log.
_DECIDED = {
    "approved": "approved",
    "rejected": "rejected",
    "applied": "applied",
    "corrected": "corrected",
    "rescoped": "changed the scope of",
    "deleted": "deleted",
}


def _describe_review(body: ReviewImported, first: Name, candidate: Name) -> str:
    """ "reviewed offline, 2026-12-02: approved the suggestion …" (or why it was not)."""
    verb = _DECIDED.get(body.decision, body.decision)
    if body.candidate is not None:
        target = f"the suggestion {candidate(body.candidate)}"
    elif body.note is not None:
        target = first(body.note)
    else:
        target = "a note"
    said = f"reviewed offline, {body.decided_at[:10]}: {verb} {target}"
    if body.outcome == "applied":
        return said
    return f"{said} — not applied, it had changed meanwhile"
