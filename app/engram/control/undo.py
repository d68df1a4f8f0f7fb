"""Undo: the actor's own last edit, change of scope, deletion or decision on a candidate,
reversed by a new event.

What "last" means. An inspector session starts when it opens a person; `session_start`
gives the journal head at that moment. The change that can be undone is the newest change
*this actor* made to this person's notes after it — an edit, a change of scope, a deletion
or an undo. If that newest change is itself an undo, there is nothing left to undo: undo
goes back one step, once (no redo, no stack). Changes by anyone else (the runtime, the
extractor, another staff member, the person themself when staff are acting) never count.

History is never rewritten: the undo is one `undone` journal event (engine.undo), appended
through the same write path as every change, so the audit log shows both steps. If the
note changed since (a restatement, another edit, its conversation deleted), the undo
refuses in one sentence rather than overwrite the later change.

A decision on a candidate (issue 21 item 8) — an approval, plain, applied or with an edit,
or a rejection — is a change too: its undo puts the candidate back in the queue, pending,
and takes back the note the approval made (control.candidate_undo). It refuses if the
candidate was decided again since, or that note changed.

A change of several notes at once (control.bulk_notes: a deletion or a change of scope of
many) is one change: its events each say how many notes changed `together`, and its undo
takes back every one of them in one transaction, or none if any of them changed since.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engram.control import candidate_undo
from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.control.wording import actor_named
from engram.engine.undo import ACTION_NAMES, UNDOABLE, CannotUndo, changed_note, undo_body
from engram.model.clock import iso
from engram.model.errors import NotAllowed, NotFound, StateConflict
from engram.model.event_bodies import Deleted, body_as
from engram.model.event_bodies import Undone as UndoneBody
from engram.model.events import Event, NewEvent
from engram.model.events import EventType as E
from engram.model.ids import CandidateId, NoteId, PersonId, new_note_id
from engram.store import journal
from engram.store.write_txn import WriteTxn

_CHANGES = (*UNDOABLE, E.UNDONE, *candidate_undo.DECISION_EVENTS)
_EXCERPT = 48
_NAMES = {**ACTION_NAMES, "approve": "approval", "reject": "rejection"}


@dataclass(frozen=True, slots=True)
class UndoableChange:
    """The change an undo would reverse: what it was, on which note, with the note's text."""

    seq: int
    action: str  # "edit" | "rescope" | "delete" | "approve" | "reject"
    note: NoteId | None  # the note as the change left it (an edit's new version)
    at: datetime
    text: str | None  # the note's words, or the suggestion's
    candidate: CandidateId | None = None  # a decision on this candidate
    count: int = 1  # the notes one bulk change changed together (`note` is the first)

    @property
    def label(self) -> str:
        """What a menu says: Undo edit of “Prefers short answers.”, Undo approval of …,
        Undo deletion of 12 notes"""
        if self.count > 1:
            return f"Undo {_NAMES[self.action]} of {self.count} notes"
        gone = "a suggestion" if self.candidate else "a note"
        text = self.text or f"{gone} whose text is gone"
        if len(text) > _EXCERPT:
            text = text[: _EXCERPT - 1] + "…"
        return f"Undo {_NAMES[self.action]} of “{text}”"

    def to_json(self) -> dict[str, Any]:
        """As a face prints it."""
        return {
            "event": self.seq,
            "action": self.action,
            "note": self.note,
            "candidate": self.candidate,
            "at": iso(self.at),
            "text": self.text,
            "notes": self.count,
        }


@dataclass(frozen=True, slots=True)
class Undone:
    """The outcome of an undo: which change it reversed and the note that now holds."""

    undid: int
    seq: int
    action: str
    note: NoteId | None  # None: a decision on a candidate undone (it is pending again)
    candidate: CandidateId | None = None
    count: int = 1  # the notes a bulk change's undo gave back (`note` is the first)

    def to_json(self) -> dict[str, Any]:
        """As a face prints it."""
        return {
            "undid": self.undid,
            "event": self.seq,
            "action": self.action,
            "note": self.note,
            "candidate": self.candidate,
            "notes": self.count,
        }


def session_start(session: PersonSession) -> int:
    """The journal head now: the changes after it belong to the session starting now."""
    with session.store.read() as conn:
        return journal.head_seq(conn, session.person)


def last_change(session: PersonSession, since_seq: int = 0) -> UndoableChange | None:
    """The actor's own newest change after `since_seq`, if it is one an undo can reverse.

    None when the actor changed nothing since, or when their newest change was an undo.
    Whether the note changed since is checked by `undo`, which says why it refuses.
    """
    store, person = session.store, session.person
    with store.read() as conn:
        change = journal.last_event_by(conn, person, session.actor, _CHANGES, since_seq)
    if change is None or change.type is E.UNDONE:
        return None
    if candidate_undo.decided(change) is not None:
        found = candidate_undo.decision(session, change)
        return UndoableChange(
            change.seq, found.action, None, change.at, found.text, found.candidate
        )
    try:
        with store.read() as conn:
            count = len(_changed_together(conn, person, change))
    except StateConflict:  # named as the one change it is; `undo` says why it refuses
        count = 1
    note_id = changed_note(change)
    notes = memory_control.notes_by_ids(session, [note_id])
    text = memory_control.texts_of(session, notes).get(note_id) if notes else None
    action = UNDOABLE[change.type]
    return UndoableChange(change.seq, action, note_id, change.at, text, count=count)


def _changed_together(conn: Any, person: PersonId, change: Event) -> list[Event]:
    """The events of the bulk change whose last event is `change` (just `change` when it
    changed one note), or StateConflict if the journal does not hold all of them."""
    count = getattr(change.body, "together", None) or 1
    if count < 2:
        return [change]
    batch = list(journal.events(conn, person, after_seq=change.seq - count, limit=count))
    whole = len(batch) == count and all(
        e.type is change.type
        and e.actor == change.actor
        and e.at == change.at
        and getattr(e.body, "together", None) == count
        for e in batch
    )
    if not whole or batch[-1].seq != change.seq:
        raise StateConflict(
            "That change of several notes is not whole in the journal, so it cannot be "
            "undone; nothing was undone."
        )
    return batch


def undo(session: PersonSession, change_seq: int, since_seq: int = 0) -> Undone:
    """Reverse the actor's last change (event `change_seq`) with one new journal event.

    Refuses, writing nothing, when the change is not the actor's, is not their last since
    `since_seq`, was already undone, or its note changed since.
    """
    store, person = session.store, session.person
    with store.write() as txn:
        journal.lock(txn, person)  # what we check below cannot change before we append
        change = journal.event_at(txn.conn, person, change_seq)
        if change is None or change.type not in (*UNDOABLE, *candidate_undo.DECISION_EVENTS):
            raise NotFound(
                f"There is no edit, change of scope, deletion or decision {change_seq} to undo."
            )
        if change.actor != session.actor:
            raise NotAllowed(
                f"That change was made by {actor_named(change.actor)}; you can undo only your "
                "own changes."
            )
        if change.seq <= since_seq:
            raise NotAllowed("Only a change made in this session can be undone.")
        newer = journal.last_event_by(txn.conn, person, session.actor, _CHANGES, change.seq)
        if newer is not None:
            if isinstance(newer.body, UndoneBody) and newer.body.undoes == change.seq:
                raise StateConflict("That change was already undone.")
            raise StateConflict(
                "You changed something after that; only your last change can be undone."
            )
        candidate = candidate_undo.decided(change)
        if candidate is not None:
            events = candidate_undo.undo_events(txn, session, change)
            committed = journal.append(store, txn, person, events)
            body = body_as(committed[0].body, UndoneBody)
            return Undone(change.seq, committed[0].seq, body.action, body.note, candidate)
        batch = _changed_together(txn.conn, person, change)
        reopened: list[Event] = []  # what a deletion brought back, in the same batch
        while (
            (after := journal.event_at(txn.conn, person, change.seq + len(reopened) + 1))
            and after.type is E.REOPENED
            and after.at == change.at
        ):
            reopened.append(after)
        if len(batch) > 1 and any(isinstance(e.body, Deleted) and e.body.shredded for e in batch):
            raise StateConflict(
                f"Those {len(batch)} notes were forgotten: their words were erased, so they "
                "cannot come back."
            )
        bodies = [_undo_one(txn, session, each, reopened, len(batch)) for each in batch]
        undos = [NewEvent(E.UNDONE, session.actor, body) for body in bodies]
        committed = journal.append(store, txn, person, undos)
    body = bodies[0]
    return Undone(change.seq, committed[-1].seq, body.action, body.holds, count=len(bodies))


def _undo_one(
    txn: WriteTxn, session: PersonSession, change: Event, reopened: list[Event], of: int
) -> UndoneBody:
    """The `undone` body that reverses one note's change (one of `of` changed together)."""
    try:
        body = undo_body(
            change,
            lambda i: memory_control.note_in(txn, session, i),
            new_note_id(),
            reopened,
        )
    except CannotUndo as refusal:
        if of == 1:
            raise StateConflict(str(refusal)) from None
        raise StateConflict(
            f"That change of {of} notes cannot be undone: {_lower_first(str(refusal))}"
        ) from None
    if body.restored is not None:
        restored = memory_control.note_in(txn, session, body.restored)
        assert restored is not None  # undo_body looked it up
        text = journal.texts(session.store, txn.conn, session.person, [restored.text_seq])
        if text.get(restored.text_seq) is None:
            raise StateConflict(
                "The text it would bring back is gone (its conversation was deleted); "
                "nothing was undone."
            )
    return body


def _lower_first(sentence: str) -> str:
    return sentence[:1].lower() + sentence[1:]
