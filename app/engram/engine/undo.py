"""Undo of an edit, a change of scope or a deletion: the event that restores what was there.

History is never rewritten. Undoing appends one `undone` event; the fold then
- for a change of scope, sets the note's scope back (the note keeps its id);
- for an edit, closes the new version and opens a restored version that carries the old
  version's text (the same sealed payload, so C4 still holds: it dies with its conversation);
- for a deletion, reopens the deleted note itself: the same id, author, sources and usage,
  its interval open again (issue 17 item 4; the deletion and the undo stay in its changes,
  and time travel to a moment between them shows it deleted). Notes the deletion brought
  back (it had contradicted them) close again, contradicted by the reopened note. Before
  issue 17 an undo opened a restored copy under a new id; the fold still replays those.

`undo_body` decides, from the change and the notes as they stand now, whether the change can
still be undone; if the note changed since, it refuses in one sentence rather than clobber.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engram.model.event_bodies import (
    Closed,
    Corrected,
    Deleted,
    Reopened,
    ScopeChanged,
    Undone,
    body_as,
)
from engram.model.events import Event, EventType
from engram.model.ids import NoteId
from engram.model.notes import Note, NoteStatus
from engram.model.scope import Scope

# The changes a person can undo, and what the inspector calls them.
UNDOABLE = {
    EventType.CORRECTED: "edit",
    EventType.SCOPE_CHANGED: "rescope",
    EventType.DELETED: "delete",
}
ACTION_NAMES = {"edit": "edit", "rescope": "change of scope", "delete": "deletion"}

NoteLookup = Callable[[NoteId], Note | None]


class CannotUndo(ValueError):
    """A change that cannot be undone any more; the message is one sentence for the user."""


def _changed_since(what: str) -> CannotUndo:
    return CannotUndo(
        f"The note changed after that {what}, so undoing it would overwrite a later change; "
        "nothing was undone."
    )


def changed_note(change: Event) -> NoteId:
    """The note an undoable change (an edit, a change of scope, a deletion) left holding."""
    body = change.body
    if not isinstance(body, Corrected | ScopeChanged | Closed):
        raise CannotUndo("Only an edit, a change of scope or a deletion can be undone.")
    return body.note


def scope_before(note: Note, seq: int) -> Scope:
    """The scope a note had before the scope change made by event `seq`."""
    for change in note.changes:
        if change.seq == seq and change.type is EventType.SCOPE_CHANGED and change.from_scope:
            return change.from_scope
    raise CannotUndo(f"Event {seq} did not change this note's scope; nothing was undone.")


def undo_body(
    change: Event, lookup: NoteLookup, new_note: NoteId, reopened: Sequence[Event] = ()
) -> Undone:
    """The body of the `undone` event that reverses `change`, or CannotUndo.

    `new_note` is the id an edit's restored version gets; a deletion's undo reopens the note
    itself (its body names it as both `restored` and `new`). `reopened` are the `reopened`
    events written with a deletion (notes the deleted one had contradicted, which came
    back): undoing the deletion closes them again, contradicted by the reopened note,
    unless they changed since.
    """
    action = UNDOABLE.get(change.type)
    if action is None:
        raise CannotUndo("Only an edit, a change of scope or a deletion can be undone.")
    name = ACTION_NAMES[action]
    if action == "edit":
        edit = body_as(change.body, Corrected)
        current, old = lookup(edit.note), lookup(edit.old)
        if current is None or old is None:
            raise CannotUndo("The note that edit made is gone; nothing was undone.")
        if current.closure is not None and current.closure.type is EventType.UNDONE:
            raise CannotUndo("That edit was already undone.")
        if not current.is_active or current.changes:
            raise _changed_since(name)
        return Undone(change.seq, action, note=current.id, restored=old.id, new=new_note)
    note = lookup(changed_note(change))
    if note is None:
        raise CannotUndo("The note is gone; nothing was undone.")
    if action == "rescope":
        later = [c for c in note.changes if c.seq > change.seq]
        if any(c.type is EventType.UNDONE for c in later):
            raise CannotUndo("That change of scope was already undone.")
        if not note.is_active or later:
            raise _changed_since(name)
        return Undone(change.seq, action, note=note.id, scope=scope_before(note, change.seq))
    if isinstance(change.body, Deleted) and change.body.shredded:
        raise CannotUndo("That note was forgotten: its words were erased, so it cannot come back.")
    undone_since = any(c.type is EventType.UNDONE and c.seq > change.seq for c in note.changes)
    if note.superseded_by is not None or undone_since:
        raise CannotUndo("That deletion was already undone.")
    if note.status is not NoteStatus.DELETED or note.closure is None:
        raise _changed_since(name)
    if note.closure.seq != change.seq:
        raise _changed_since(name)
    recloses = []
    for event in reopened:
        if event.type is not EventType.REOPENED:
            continue
        reopened_body = body_as(event.body, Reopened)
        if reopened_body.after != note.id:
            continue
        back = lookup(reopened_body.note)
        if back is None or not back.is_active or not back.changes:
            raise _brought_back_changed()
        if back.changes[-1].seq != event.seq:
            raise _brought_back_changed()
        recloses.append(back.id)
    return Undone(change.seq, action, restored=note.id, new=note.id, recloses=tuple(recloses))


def _brought_back_changed() -> CannotUndo:
    return CannotUndo(
        "A note that deletion brought back has changed since, so undoing the deletion would "
        "overwrite a later change; nothing was undone."
    )
