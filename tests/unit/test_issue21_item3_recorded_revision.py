"""Issue 21 item 3: each decision a reviewer makes carries the revision it was made against
in its journal event body (an edit, a change of scope, a deletion; a candidate decision
always did), and the import of a review copy checks the live note against that recorded
revision, falling back to deriving it from the copy's chain for copies decided before."""

from __future__ import annotations

from pathlib import Path

from engram.control import notes
from engram.control.review_copy import export_review_copy
from engram.control.review_import import APPLIED, CONFLICT, import_review
from engram.control.session import PersonSession
from engram.model.event_bodies import Corrected, Deleted, ScopeChanged
from engram.model.events import EventType, NewEvent
from engram.model.ids import NoteId
from engram.model.notes import note_revision
from engram.model.scope import Kind, Scope
from engram.store import journal
from engram.store.store import Store

REVIEW = "the reviewer's passphrase"


def _last_event(session: PersonSession, type_: EventType):  # type: ignore[no-untyped-def]
    with session.store.read() as conn:
        found = list(journal.events_of_types(conn, session.person, [type_]))
    return found[-1]


def test_issue21_item3_each_note_decision_records_the_revision_it_was_made_against(
    store: Store,
) -> None:
    ana = PersonSession.open_new(store, "ana", "staff:dana")
    job = notes.add_note(ana, "Works as a nurse.", Kind.FACT, Scope.DIRECT, create_person=True)
    created = note_revision(notes.get_note(ana, job))
    notes.edit_note(ana, job, scope=Scope.PORTABLE)
    rescoped = _last_event(ana, EventType.SCOPE_CHANGED)
    assert isinstance(rescoped.body, ScopeChanged) and rescoped.body.revision == created
    assert rescoped.body.to_json()["revision"] == created  # in the stored, hashed body

    midwife = notes.edit_note(ana, job, text="Works as a midwife.")
    edited = _last_event(ana, EventType.CORRECTED)
    assert isinstance(edited.body, Corrected) and edited.body.revision == rescoped.seq

    notes.delete_note(ana, midwife, "moved on")
    deleted = _last_event(ana, EventType.DELETED)
    assert isinstance(deleted.body, Deleted) and deleted.body.revision == edited.seq
    # An older body, with no revision, still reads (and writes back the same keys).
    assert ScopeChanged.from_json({"note": job, "scope": "portable"}).revision is None
    assert "revision" not in ScopeChanged(NoteId(job), Scope.PORTABLE).to_json()


def _copy(store: Store, tmp_path: Path) -> tuple[Path, PersonSession, NoteId]:
    ana = PersonSession.open_new(store, "ana", "staff:dana")
    city = notes.add_note(ana, "Lives in Oslo.", Kind.FACT, Scope.DIRECT, create_person=True)
    path = tmp_path / "review.engram"
    export_review_copy(ana, path, REVIEW)
    return path, ana, city


def test_issue21_item3_a_decision_against_revision_r_conflicts_once_the_live_note_moved_on(
    store: Store, tmp_path: Path
) -> None:
    path, ana, city = _copy(store, tmp_path)
    made_against = note_revision(notes.get_note(ana, city))
    copy = Store.open(str(path), passphrase=REVIEW)
    try:
        rita = PersonSession.open(copy, "ana", "staff:rita")
        notes.edit_note(rita, city, scope=Scope.PORTABLE)
        assert _last_event(rita, EventType.SCOPE_CHANGED).body.revision == made_against
    finally:
        copy.close()
    notes.edit_note(ana, city, scope=Scope.UNSPECIFIED)  # the live note moves past r
    assert note_revision(notes.get_note(ana, city)) > made_against
    done = import_review(store, path, REVIEW, "staff:dana")
    assert [(o.decision.revision, o.outcome) for o in done.outcomes] == [(made_against, CONFLICT)]
    assert notes.get_note(ana, city).scope is Scope.UNSPECIFIED  # never overwritten


def test_issue21_item3_the_recorded_revision_decides_not_the_copys_chain(
    store: Store, tmp_path: Path
) -> None:
    ana = PersonSession.open_new(store, "ana", "staff:dana")
    city = notes.add_note(ana, "Lives in Oslo.", Kind.FACT, Scope.DIRECT, create_person=True)
    seen = note_revision(notes.get_note(ana, city))  # what the reviewer saw
    notes.edit_note(ana, city, scope=Scope.UNSPECIFIED)  # moved past it before the copy
    path = tmp_path / "review.engram"
    export_review_copy(ana, path, REVIEW)
    copy = Store.open(str(path), passphrase=REVIEW)
    try:  # a decision recorded against the revision the reviewer saw, not the newest
        body = ScopeChanged(city, Scope.PORTABLE, revision=seen)
        with copy.write() as txn:
            event = NewEvent(EventType.SCOPE_CHANGED, "staff:rita", body)
            journal.append(copy, txn, ana.person, [event])
    finally:
        copy.close()
    done = import_review(store, path, REVIEW, "staff:dana")
    # Derived from the copy's chain, the decision would follow the newest revision and apply.
    assert [(o.decision.revision, o.outcome) for o in done.outcomes] == [(seen, CONFLICT)]
    assert notes.get_note(ana, city).scope is Scope.UNSPECIFIED


def test_issue21_item3_a_copy_decided_before_revisions_were_recorded_still_imports(
    store: Store, tmp_path: Path
) -> None:
    path, ana, city = _copy(store, tmp_path)
    copy = Store.open(str(path), passphrase=REVIEW)
    try:  # the body an older engram wrote: no revision
        with copy.write() as txn:
            event = NewEvent(
                EventType.SCOPE_CHANGED, "staff:rita", ScopeChanged(city, Scope.PORTABLE)
            )
            journal.append(copy, txn, ana.person, [event])
    finally:
        copy.close()
    done = import_review(store, path, REVIEW, "staff:dana")
    assert [o.outcome for o in done.outcomes] == [APPLIED]
    assert notes.get_note(ana, city).scope is Scope.PORTABLE
