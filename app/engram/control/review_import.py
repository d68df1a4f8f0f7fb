"""Bringing an offline review back (issue 21 item 4).

A review copy (control/review_copy.py) holds the person's journal at the live store's own
positions, then the record of where it came from, then whatever the reviewer decided: each
decision is the journal event the same control operation writes anywhere (a candidate
approved or rejected against its revision, applied; a note corrected, rescoped or deleted),
under the reviewer's actor id. Importing reads those decisions in order and replays each
on the live store as that same control operation, under the reviewer's actor:

- a candidate decision carries the revision it was made against, and the live store's own
  check of that revision decides (P6);
- a note decision was made against the note's revision — the journal position of the last
  change to its words, scope or status before it, which its event records (issue 21 item
  3; for a copy decided before that, derived from the copy's signed chain); the live note
  must still be open at that same revision.

What still applies is applied; what changed meanwhile on the live store is a conflict, and
is never overwritten. A decision that builds on an earlier one which did not apply (an
edit of the reviewer's own correction, the application of an approval) is a conflict too.
Each outcome is recorded in the live journal (`review_imported`: the reviewer, "reviewed
offline" and the day it was decided), so a second import of the same copy finds every
decision already imported and applies nothing.

Before anything is read from it, the copy is checked: it must verify (every chain and
signature, so a changed decision is refused) and carry the live store's own signature over
its record, naming the copy's own signing key (so a copy made, or re-keyed, elsewhere is
refused).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engram.control import candidates as candidate_control
from engram.control import notes as memory_control
from engram.control.review_copy import ReviewCopyInfo, review_copy_info, signed_message
from engram.control.session import PersonSession, check_session_actor
from engram.control.wording import quoted
from engram.model.clock import iso
from engram.model.errors import (
    Conflict,
    InvalidInput,
    NotAllowed,
    NotAStore,
    NotFound,
)
from engram.model.event_bodies import (
    CandidateApplied,
    CandidateReviewed,
    Corrected,
    Deleted,
    ReviewImported,
    ScopeChanged,
    body_as,
)
from engram.model.events import Event, EventType, NewEvent
from engram.model.ids import CandidateId, NoteId
from engram.model.notes import Note, note_revision
from engram.model.scope import Scope
from engram.store import crypto, file_check, journal
from engram.store.store import Store
from engram.store.verify import verify

APPLIES, APPLIED, CONFLICT, IMPORTED = "applies", "applied", "conflict", "already imported"
_DECISIONS = {
    EventType.CANDIDATE_REVIEWED,
    EventType.CANDIDATE_APPLIED,
    EventType.CORRECTED,
    EventType.SCOPE_CHANGED,
    EventType.DELETED,
}
# Events an application brings with it in its own batch (the note it became, or the
# restatement or contradiction it was), and one a deletion can (a reopened note).
_APPLIED_WITH = {EventType.NOTE_ADDED, EventType.RESTATED, EventType.CONTRADICTED}
_DELETED_WITH = {EventType.REOPENED}
# Records that change nothing to bring back: an export of the copy, what an agent was shown.
_RECORDS = {EventType.EXPORTED, EventType.ITEM_USED}


@dataclass(frozen=True)
class ReviewDecision:
    """One decision the reviewer made on the copy."""

    seq: int  # its position in the copy's journal
    decision: str  # approved, rejected, applied, corrected, rescoped, deleted
    decided_at: str
    reviewer: str
    revision: int  # the candidate's or note's revision it was made against
    candidate: CandidateId | None = None
    note: NoteId | None = None  # the note it acts on (the copy's id)
    becomes: NoteId | None = None  # the note it made in the copy (a correction, application)
    text: str | None = None  # a correction's words; a rejection's or deletion's reason
    scope: Scope | None = None
    words: str = ""  # what it is about, quoted


@dataclass
class Outcome:
    """What became, or would become, of one decision."""

    decision: ReviewDecision
    outcome: str  # applies (preview), applied, conflict, already imported
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        """As the CLI prints it."""
        d = self.decision
        return {
            "seq": d.seq,
            "decision": d.decision,
            "decided_at": d.decided_at,
            "reviewer": d.reviewer,
            "revision": d.revision,
            "candidate": d.candidate,
            "note": d.note,
            "about": d.words,
            "outcome": self.outcome,
            **({"why": self.why} if self.why else {}),
        }


@dataclass
class ReviewResult:
    """A whole review, previewed or imported."""

    copy: ReviewCopyInfo
    applied: bool  # False: a preview, nothing was written
    outcomes: list[Outcome] = field(default_factory=list)
    not_carried: int = 0  # the reviewer's changes that are not decisions to bring back

    def count(self, outcome: str) -> int:
        """How many decisions had this outcome."""
        return sum(1 for o in self.outcomes if o.outcome == outcome)

    @property
    def conflicts(self) -> list[Outcome]:
        """The decisions that do not (or did not) apply."""
        return [o for o in self.outcomes if o.outcome == CONFLICT]

    def to_json(self) -> dict[str, Any]:
        """As the CLI prints it."""
        return {
            **self.copy.to_json(),
            "applied": self.applied,
            "decisions": [o.to_json() for o in self.outcomes],
            "applies": self.count(APPLIES) + self.count(APPLIED),
            "conflicts": self.count(CONFLICT),
            "already_imported": self.count(IMPORTED),
            "not_carried": self.not_carried,
        }


def preview_review(
    store: Store, path: str | os.PathLike[str], passphrase: str, actor: str | None = None
) -> ReviewResult:
    """What importing the review copy at `path` into `store` would apply and what
    conflicts; writes nothing. `actor`: who imports (default: the person themself)."""
    with _opened(store, path, passphrase, actor) as (session, copy, info):
        return _walk(session, copy, info, apply=False)


def import_review(
    store: Store, path: str | os.PathLike[str], passphrase: str, actor: str | None = None
) -> ReviewResult:
    """Apply the review copy's decisions that still apply to `store`; record every outcome."""
    with _opened(store, path, passphrase, actor) as (session, copy, info):
        return _walk(session, copy, info, apply=True)


# ---- checking the copy ------------------------------------------------------------------


@contextlib.contextmanager
def _opened(
    store: Store, path: str | os.PathLike[str], passphrase: str, actor: str | None
) -> Iterator[tuple[PersonSession, Store, ReviewCopyInfo]]:
    """The review copy, open, once it is known to be this store's own and unchanged, with
    a session on the live store for the person it holds."""
    source = Path(path).expanduser()
    if not file_check.holds_store(source):
        raise NotAStore(
            f"{source} is not a review copy (not an Engram store); nothing was imported."
        )
    copy = Store.open(str(source), passphrase=passphrase)
    try:
        info = review_copy_info(copy)
        if info is None:
            raise NotAllowed(f"{source} is a store, but not a review copy; nothing was imported.")
        _check_copy(store, copy, info, source)
        yield PersonSession.open(store, info.person, actor), copy, info
    finally:
        copy.close()


def _check_copy(live: Store, copy: Store, info: ReviewCopyInfo, source: Path) -> None:
    made = info.made
    if made.source != live.info.id:
        raise NotAllowed(
            f"The review copy {source} was taken from another store ({made.source}), not "
            "this one; nothing was imported."
        )
    try:
        signature = bytes.fromhex(made.signature)
    except ValueError:
        signature = b""
    signed = made.source_key == live.info.verify_key.hex() and crypto.signature_ok(
        live.info.verify_key, signed_message(made), signature
    )
    own_key = made.copy == copy.info.id and made.copy_key == copy.info.verify_key.hex()
    if not signed or not own_key:
        raise NotAllowed(
            f"The review copy {source} is not signed as this store's own copy (its record or "
            "its signing key was replaced), so nothing was imported."
        )
    checked = verify(copy, against_checkpoint=False)
    if not checked.ok:
        raise NotAllowed(
            f"The review copy {source} was changed after it was made ({checked.problems[0]}), "
            "so nothing was imported."
        )


# ---- reading the decisions --------------------------------------------------------------


def _decisions(copy: Store, info: ReviewCopyInfo) -> tuple[list[ReviewDecision], int]:
    """The reviewer's decisions in order, and how many other changes they made."""
    person = info.person
    with copy.read() as conn:
        events = list(journal.events(conn, person, after_seq=info.made_seq))
        texts = journal.texts(copy, conn, person, [e.seq for e in events if e.has_payload])
    copy_session = PersonSession(copy, person, person)
    found: list[ReviewDecision] = []
    other = 0
    moments = {(e.type, e.at) for e in events}
    for event in events:
        if event.type not in _DECISIONS:
            brought = (
                (event.type in _APPLIED_WITH and (EventType.CANDIDATE_APPLIED, event.at) in moments)
                or (event.type in _DELETED_WITH and (EventType.DELETED, event.at) in moments)
                or event.type in _RECORDS
            )
            other += not brought
            continue
        if not _is_person_actor(event.actor, person):
            other += 1
            continue
        found.append(_decision(copy_session, event, texts.get(event.seq)))
    return found, other


def _is_person_actor(actor: str, person: str) -> bool:
    try:
        check_session_actor(actor, person)
    except InvalidInput:
        return False
    return True


def _decision(copy_session: PersonSession, event: Event, text: str | None) -> ReviewDecision:
    at, actor, seq = str(iso(event.at)), event.actor, event.seq
    body = event.body
    if isinstance(body, CandidateReviewed):
        words = _suggestion_words(copy_session, body.candidate)
        return ReviewDecision(
            seq, body.decision, at, actor, body.revision, body.candidate, text=text, words=words
        )
    if isinstance(body, CandidateApplied):
        state = candidate_control.get_candidate(copy_session, body.candidate)
        words = quoted(state.get("text"))
        return ReviewDecision(
            seq, "applied", at, actor, 0, body.candidate, becomes=body.note, words=words
        )
    if isinstance(body, Corrected):
        note = memory_control.get_note(copy_session, body.old)
        return ReviewDecision(
            seq,
            "corrected",
            at,
            actor,
            _made_against(body.revision, note, seq),
            note=body.old,
            becomes=body.note,
            text=text,
            scope=body.scope,
            words=_note_words(copy_session, note),
        )
    if isinstance(body, ScopeChanged):
        note = memory_control.get_note(copy_session, body.note)
        return ReviewDecision(
            seq,
            "rescoped",
            at,
            actor,
            _made_against(body.revision, note, seq),
            note=body.note,
            scope=body.scope,
            words=_note_words(copy_session, note),
        )
    deleted = body_as(body, Deleted)
    note = memory_control.get_note(copy_session, deleted.note)
    return ReviewDecision(
        seq,
        "deleted",
        at,
        actor,
        _made_against(deleted.revision, note, seq),
        note=deleted.note,
        text=text,
        words=_note_words(copy_session, note),
    )


def _made_against(recorded: int | None, note: Note, seq: int) -> int:
    """The note's revision a decision was made against: as its event records it (issue 21
    item 3), or, for a copy decided before decisions recorded it, derived from the copy's
    chain (the last change to the note before the decision)."""
    return recorded if recorded is not None else note_revision(note, before=seq)


def _note_words(session: PersonSession, note: Note) -> str:
    return quoted(memory_control.texts_of(session, [note]).get(note.id))


def _suggestion_words(session: PersonSession, candidate: CandidateId) -> str:
    return quoted(candidate_control.get_candidate(session, candidate).get("text"))


# ---- replaying them ---------------------------------------------------------------------


@dataclass
class _Walk:
    """What the replay has learnt so far: which of the copy's notes are which live notes,
    the revision each live note this import changed now stands at, and what failed."""

    through: int
    notes: dict[NoteId, NoteId] = field(default_factory=dict)
    revisions: dict[NoteId, int] = field(default_factory=dict)
    failed_notes: set[NoteId] = field(default_factory=set)
    failed_candidates: set[CandidateId] = field(default_factory=set)
    approved: set[CandidateId] = field(default_factory=set)  # by this review (a preview)
    # The copy's notes a preview takes to be made or changed by its earlier decisions.
    previewed: set[NoteId] = field(default_factory=set)


def _walk(
    session: PersonSession, copy: Store, info: ReviewCopyInfo, *, apply: bool
) -> ReviewResult:
    decisions, other = _decisions(copy, info)
    result = ReviewResult(info, apply, not_carried=other)
    done = _already_imported(session, info.made.copy)
    walk = _Walk(info.through)
    for decision in decisions:
        if decision.seq in done:
            result.outcomes.append(Outcome(decision, IMPORTED))
            continue
        reviewer = PersonSession(session.store, session.person, decision.reviewer)
        try:
            live_note = _check(reviewer, decision, walk)
            if apply:
                _apply(reviewer, decision, walk, live_note)
            else:
                _foresee(decision, walk)
            outcome = Outcome(decision, APPLIED if apply else APPLIES)
        except (Conflict, NotAllowed, NotFound, InvalidInput) as refusal:
            _failed(decision, walk)
            outcome = Outcome(decision, CONFLICT, str(refusal))
        if apply:
            _record(session, info, outcome, walk)
        result.outcomes.append(outcome)
    return result


def _already_imported(session: PersonSession, copy_id: str) -> set[int]:
    with session.store.read() as conn:
        events = journal.events_of_types(conn, session.person, [EventType.REVIEW_IMPORTED])
        bodies = [body_as(e.body, ReviewImported) for e in events]
    return {b.decision_seq for b in bodies if b.copy == copy_id}


def _foresee(decision: ReviewDecision, walk: _Walk) -> None:
    """A preview takes a decision that applies as done, for the decisions after it."""
    if decision.decision == "approved" and decision.candidate:
        walk.approved.add(decision.candidate)
    for made in (decision.becomes, decision.note if decision.decision == "rescoped" else None):
        if made:
            walk.previewed.add(made)


def _failed(decision: ReviewDecision, walk: _Walk) -> None:
    if decision.becomes:
        walk.failed_notes.add(decision.becomes)
    if decision.note and decision.decision == "rescoped":
        walk.failed_notes.add(decision.note)
    if decision.candidate:
        walk.failed_candidates.add(decision.candidate)


def _live_note_id(decision: ReviewDecision, walk: _Walk, copy_created: int) -> NoteId:
    assert decision.note is not None
    if decision.note in walk.failed_notes:
        raise Conflict(
            f"The note {decision.words} comes from an earlier decision of this review that "
            "was not applied."
        )
    if decision.note in walk.notes:
        return walk.notes[decision.note]
    if copy_created > walk.through:  # made in the copy, by a decision not carried back
        raise Conflict(f"The note {decision.words} was made in the review copy only.")
    return decision.note


def _check(reviewer: PersonSession, decision: ReviewDecision, walk: _Walk) -> Note | None:
    """Raise the conflict that keeps a decision from applying; the live note it acts on."""
    if decision.candidate is not None:
        if decision.candidate in walk.failed_candidates:
            raise Conflict(
                f"The suggestion {decision.words} had an earlier decision of this review that "
                "was not applied."
            )
        state = candidate_control.get_candidate(reviewer, decision.candidate)
        if decision.decision == "applied":
            if state["status"] != "approved" and decision.candidate not in walk.approved:
                raise Conflict(
                    f"The suggestion {decision.words} is {state['status']} on this store, "
                    "so it cannot be applied."
                )
            return None
        if state["revision"] != decision.revision or state["status"] != "pending":
            raise Conflict(
                f"The suggestion {decision.words} was decided meanwhile on this store (it is "
                f"{state['status']}, revision {state['revision']}, not {decision.revision})."
            )
        return None
    if decision.note in walk.previewed:
        return None  # a preview: an earlier decision of this review makes or changes it
    # A note the copy made or changed has its revision after the copy was taken.
    live_id = _live_note_id(decision, walk, decision.revision)
    try:
        note = memory_control.get_note(reviewer, live_id)
    except NotFound:
        raise Conflict(f"The note {decision.words} is no longer on this store.") from None
    if not note.is_active:
        raise Conflict(
            f"The note {decision.words} was {note.status.value} meanwhile on this store."
        )
    expected = walk.revisions.get(live_id, decision.revision)
    if note_revision(note) != expected:
        raise Conflict(f"The note {decision.words} was changed meanwhile on this store.")
    return note


def _apply(
    reviewer: PersonSession, decision: ReviewDecision, walk: _Walk, note: Note | None
) -> None:
    """The same control operation the reviewer's decision was, on the live store."""
    candidate = decision.candidate
    if candidate is not None:
        if decision.decision == "approved":
            candidate_control.approve(reviewer, candidate, decision.revision)
        elif decision.decision == "rejected":
            candidate_control.reject(reviewer, candidate, decision.revision, decision.text or "")
        else:
            made = candidate_control.apply(reviewer, candidate)["applied_note"]
            if decision.becomes:
                walk.notes[decision.becomes] = NoteId(made)
                walk.revisions[NoteId(made)] = _revision_now(reviewer, NoteId(made))
        return
    assert note is not None
    if decision.decision == "deleted":
        memory_control.delete_note(reviewer, note.id, decision.text)
        return
    if decision.decision == "rescoped":
        assert decision.scope is not None
        memory_control.edit_note(reviewer, note.id, scope=decision.scope)
        if decision.note:
            walk.notes[decision.note] = note.id
        walk.revisions[note.id] = _revision_now(reviewer, note.id)
        return
    made_id = memory_control.edit_note(reviewer, note.id, text=decision.text, scope=decision.scope)
    if decision.becomes:
        walk.notes[decision.becomes] = made_id
    walk.revisions[made_id] = _revision_now(reviewer, made_id)


def _revision_now(session: PersonSession, note: NoteId) -> int:
    return note_revision(memory_control.get_note(session, note))


def _record(session: PersonSession, info: ReviewCopyInfo, outcome: Outcome, walk: _Walk) -> None:
    """The outcome in the live audit log, under the reviewer, with the day they decided."""
    d = outcome.decision
    live_note = walk.notes.get(d.note, d.note) if d.note else None
    body = ReviewImported(
        copy=info.made.copy,
        decision_seq=d.seq,
        decision=d.decision,
        decided_at=d.decided_at,
        outcome=APPLIED if outcome.outcome == APPLIED else CONFLICT,
        imported_by=session.actor,
        note=live_note,
        candidate=d.candidate,
    )
    event = NewEvent(EventType.REVIEW_IMPORTED, d.reviewer, body, None, outcome.why or None)
    with session.store.write() as txn:
        journal.append(session.store, txn, session.person, [event])
