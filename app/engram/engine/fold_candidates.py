"""The fold's steps for learning candidates (P5, P6): suggested, reviewed, applied, and a
decision on one undone (issue 21 item 8).

Undoing a decision puts the candidate back in the queue: pending again, at a new revision
(so a decision made against the revision before the undo is stale), with no note. When the
decision was an approval that became a note, that note closes (deleted, its closure the
undo); when it restated a note, the source the restatement added is taken back. A note the
approval's note had contradicted comes back through the `reopened` events written with
the undo, as after a deletion.
"""

from __future__ import annotations

import dataclasses

from engram.engine.fold_target import FoldError, FoldTarget, StaleRevision, close_note
from engram.model.event_bodies import (
    CandidateApplied,
    CandidateReviewed,
    CandidateSuggested,
    Undone,
    body_as,
)
from engram.model.events import Event, EventType
from engram.model.ids import CandidateId
from engram.model.notes import CandidateState, Change, Note, NoteStatus

DECISIONS = {"approve": "approved", "reject": "rejected"}  # the action, the status it undoes


def on_candidate_suggested(target: FoldTarget, event: Event) -> None:
    body = body_as(event.body, CandidateSuggested)
    candidate = body.candidate
    if target.get_candidate(candidate) is not None:
        raise FoldError(f"event {event.seq} re-suggests candidate {candidate}")
    target.put_candidate(
        CandidateState(
            id=candidate,
            revision=1,
            status="pending",
            payload_seq=event.seq,
            kind=body.kind,
            scope=body.scope,
        )
    )


def _need_candidate(target: FoldTarget, event: Event, candidate: CandidateId) -> CandidateState:
    state = target.get_candidate(candidate)
    if state is None:
        raise FoldError(f"event {event.seq} names unknown candidate")
    return state


def on_candidate_reviewed(target: FoldTarget, event: Event) -> None:
    body = body_as(event.body, CandidateReviewed)
    state = _need_candidate(target, event, body.candidate)
    if body.revision != state.revision:
        raise StaleRevision(
            f"candidate {state.id} is at revision {state.revision}, not {body.revision}"
        )
    if state.status != "pending":
        raise FoldError(f"event {event.seq} reviews candidate {state.id}, already {state.status}")
    target.put_candidate(
        dataclasses.replace(state, revision=state.revision + 1, status=body.decision)
    )


def on_candidate_applied(target: FoldTarget, event: Event) -> None:
    body = body_as(event.body, CandidateApplied)
    state = _need_candidate(target, event, body.candidate)
    if state.status != "approved":
        raise FoldError(f"event {event.seq} applies candidate {state.id}, which is {state.status}")
    target.put_candidate(
        dataclasses.replace(
            state,
            revision=state.revision + 1,
            status="applied",
            note=body.note,
        )
    )


def undo_candidate_decision(
    target: FoldTarget, event: Event, body: Undone, note: Note | None
) -> None:
    """An approval or a rejection undone: the candidate is pending again, and the note an
    approval made (`note`, the one `body.note` names, looked up by the fold) closes, or the
    source its restatement added is taken back."""
    assert body.candidate is not None
    state = _need_candidate(target, event, body.candidate)
    decided = DECISIONS.get(body.action)
    if decided is None:
        raise FoldError(f"event {event.seq} undoes an unknown decision {body.action!r}")
    allowed = {decided, "applied"} if body.action == "approve" else {decided}
    if state.status not in allowed:
        raise FoldError(f"event {event.seq} undoes a {body.action} of a {state.status} candidate")
    if body.note is not None:
        if note is None or not note.is_active:
            raise FoldError(f"event {event.seq} takes back note {body.note}, which is not open")
        if body.restatement is None:
            target.put_note(close_note(note, event, NoteStatus.DELETED))
        else:
            said = [c for c in note.changes if c.seq == body.restatement]
            if not said or said[0].type is not EventType.RESTATED:
                raise FoldError(f"event {event.seq} takes back no restatement of {note.id}")
            restated = said[0]
            kept = list(note.sources)
            for i in range(len(kept) - 1, -1, -1):
                if kept[i].at == restated.at and kept[i].conversation == restated.detail:
                    del kept[i]
                    break
            change = Change(event.seq, event.at, event.type, event.actor, "restatement undone")
            target.put_note(
                dataclasses.replace(note, sources=tuple(kept), changes=(*note.changes, change))
            )
    target.put_candidate(
        dataclasses.replace(state, revision=state.revision + 1, status="pending", note=None)
    )
