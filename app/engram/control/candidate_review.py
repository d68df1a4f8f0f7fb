"""The review queue's two operations beyond approve and reject (issue 21 item 8):
approving with an edit of the text or scope in one write, and finding the notes a
suggestion would duplicate (it already names the ones it restates or contradicts).

Approve-with-edit is the same journal events the separate steps would append — the
decision on the revision the reviewer saw, the application, then the correction or the
change of scope — in one transaction, so either all of them happen or none does, and
the audit log shows the suggestion as it was and the note as the reviewer made it.
"""

from __future__ import annotations

from typing import Any

from engram.control import notes as memory_control
from engram.control.candidates import _apply, _review, get_candidate
from engram.control.session import PersonSession
from engram.model.errors import InvalidInput
from engram.model.event_bodies import Corrected, ScopeChanged
from engram.model.events import EventType, NewEvent
from engram.model.ids import CandidateId, NoteId, new_note_id
from engram.model.notes import NoteFilter, NoteStatus, note_revision
from engram.model.scope import Scope
from engram.runtime.note_writes import check_text
from engram.store import journal

DUPLICATES_SHOWN = 5


def approve_edited(
    session: PersonSession,
    candidate_id: str,
    revision: int,
    *,
    text: str | None = None,
    scope: Scope | None = None,
) -> dict[str, Any]:
    """Approve the revision the reviewer saw and make it a note as they edited it (a new
    text, a new scope, or both), in one write; the candidate, with the note it became."""
    if text is None and scope is None:
        raise InvalidInput("Say what to change: give a new text, a new scope, or both.")
    cleaned = check_text(text) if text is not None else None
    # What the note will read and reach once applied: the suggestion's, or the note's it
    # restates (read before the write; the revision check below refuses a changed one).
    before = get_candidate(session, candidate_id)
    was_text, was_scope = before.get("text"), Scope(before["scope"])
    if before.get("restates"):
        [restated] = memory_control.notes_by_ids(session, [NoteId(before["restates"])])
        was_text = memory_control.texts_of(session, [restated]).get(restated.id)
        was_scope = restated.scope
    if cleaned is not None and cleaned == (was_text or "").strip():
        cleaned = None  # the same words: at most a change of scope
    if scope is was_scope:
        scope = None
    store, person = session.store, session.person
    with store.write() as txn:
        _review(txn, session, candidate_id, revision, "approved", None)
        note = NoteId(_apply(txn, session, candidate_id))
        # The edit names the candidate: undo takes it as part of the approval (issue 21
        # item 8), and it records the revision it was made against (item 3).
        made = memory_control.note_in(txn, session, note)
        assert made is not None  # just applied
        revision, candidate = note_revision(made), CandidateId(candidate_id)
        if cleaned is not None:
            body = Corrected(note, new_note_id(), scope, None, revision, candidate)
            event = NewEvent(EventType.CORRECTED, session.actor, body, text=cleaned)
            journal.append(store, txn, person, [event])
            note = body.note
        elif scope is not None:
            rescoped = ScopeChanged(note, scope, revision, candidate)
            event = NewEvent(EventType.SCOPE_CHANGED, session.actor, rescoped)
            journal.append(store, txn, person, [event])
    return {**get_candidate(session, candidate_id), "applied_note": note}


def _same(text: str | None) -> str:
    return " ".join((text or "").casefold().split())


def duplicates_of(session: PersonSession, candidate: dict[str, Any]) -> list[dict[str, Any]]:
    """The active notes that say what the suggestion says (the same words, case and spacing
    aside), other than the one it restates: applying it would keep the same thing twice."""
    wanted = _same(candidate.get("text"))
    if not wanted:
        return []
    active = NoteFilter(statuses=[NoteStatus.ACTIVE])
    # Found by its longest word (spacing may differ), then compared whole.
    found = memory_control.matching_text(session, active, max(wanted.split(), key=len))
    found.finish()
    notes = found.page(0, found.total)
    texts = memory_control.texts_of(session, notes)
    same = [
        {"id": str(n.id), "text": texts.get(n.id), "scope": n.scope.value}
        for n in notes
        if _same(texts.get(n.id)) == wanted and str(n.id) != candidate.get("restates")
    ]
    return same[:DUPLICATES_SHOWN]
