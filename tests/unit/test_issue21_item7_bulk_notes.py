"""Issue 21 item 7: many notes deleted, rescoped or forgotten in one transaction after a
preview that lists them, refused whole when a listed note changed since; "Forget everything
about…" a word or phrase finds the notes holding it as a word, and forgetting erases their
words (every version's, and the suggestion's they were approved from) for good (C2, C4)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from engram.control import bulk_notes, candidates, notes, undo
from engram.control.audit_sentences import describe
from engram.control.bulk_notes import BulkAction
from engram.control.session import PersonSession
from engram.model.errors import NotFound, StateConflict
from engram.model.event_bodies import Deleted
from engram.model.events import Cause, EventType
from engram.model.ids import PersonId
from engram.model.notes import NoteFilter, NoteStatus
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.note_writes import NoteDraft, suggestion
from engram.store import journal
from engram.store.store import Store
from engram.store.verify import verify

ANA = PersonId("ana")


@pytest.fixture
def ana(store: Store) -> PersonSession:
    start_conversation(store, [ANA])
    return PersonSession.open(store, ANA, "staff:dana")


def _add(session: PersonSession, text: str) -> str:
    return notes.add_note(session, text, Kind.FACT, Scope.DIRECT)


def _head(session: PersonSession) -> int:
    with session.store.read() as conn:
        return journal.head_seq(conn, session.person)


def _payloads(store: Store) -> int:
    with store.read() as conn:
        return int(conn.exec_driver_sql("SELECT count(*) FROM journal_payloads").scalar() or 0)


def test_issue21_item7_delete_many_in_one_transaction_after_a_preview(ana: PersonSession) -> None:
    ids = [_add(ana, f"Keeps bees number {i}.") for i in range(3)]
    other = _add(ana, "Plays the cello.")
    shown = bulk_notes.preview(ana, ids, BulkAction.DELETE)
    assert [n.text for n in shown.notes] == [f"Keeps bees number {i}." for i in range(3)]
    assert "Delete 3 notes" in shown.sentence()
    before = _head(ana)
    done = bulk_notes.apply(ana, shown, "not true")
    assert done.changed == tuple(ids)
    for note_id in ids:
        assert notes.get_note(ana, note_id).status is NoteStatus.DELETED
    assert notes.get_note(ana, other).is_active
    with ana.store.read() as conn:
        new = list(journal.events(conn, ANA, after_seq=before))
        heads = conn.exec_driver_sql(
            "SELECT count(DISTINCT at) FROM journal WHERE person = 'ana' AND seq > ?", (before,)
        ).scalar()
    assert [e.type for e in new] == [EventType.DELETED] * 3
    assert {e.actor for e in new} == {"staff:dana"}
    assert heads == 1  # written together, at one moment, in one transaction
    assert verify(ana.store).ok


def test_issue21_item7_a_note_changed_since_the_preview_refuses_all(ana: PersonSession) -> None:
    ids = [_add(ana, f"Runs on day {i}.") for i in range(3)]
    shown = bulk_notes.preview(ana, ids, BulkAction.RESCOPE, Scope.PORTABLE)
    notes.edit_note(ana, ids[1], scope=Scope.UNSPECIFIED)  # another window, meanwhile
    before = _head(ana)
    with pytest.raises(StateConflict, match="changed after the preview, so nothing was changed"):
        bulk_notes.apply(ana, shown)
    assert _head(ana) == before
    assert notes.get_note(ana, ids[0]).scope is Scope.DIRECT
    with pytest.raises(NotFound):
        bulk_notes.preview(ana, [*ids, "n_nobody"], BulkAction.DELETE)
    again = bulk_notes.preview(ana, ids, BulkAction.RESCOPE, Scope.PORTABLE)
    bulk_notes.apply(ana, again)
    assert {notes.get_note(ana, i).scope for i in ids} == {Scope.PORTABLE}


def test_issue21_item7_forget_about_matches_a_word_not_a_part_of_one(ana: PersonSession) -> None:
    paris = _add(ana, "Moved to Paris in May.")
    possessive = _add(ana, "Paris's museums are a favourite.")
    _add(ana, "Made a comparison of two bikes.")  # "paris" inside a word: not about Paris
    closed = _add(ana, "Visited paris once.")
    notes.delete_note(ana, closed)
    shown = bulk_notes.about(ana, "  PARIS ")
    assert shown.about == "PARIS"
    assert {n.id for n in shown.notes} == {paris, possessive, closed}  # closed ones too
    deleting = bulk_notes.about(ana, "paris", BulkAction.DELETE)
    assert {n.id for n in deleting.notes} == {paris, possessive}  # only active ones


def test_issue21_item7_forget_erases_every_version_and_its_suggestion(ana: PersonSession) -> None:
    store = ana.store
    info = start_conversation(store, [ANA])
    turn = append_turn(store, info.id, role="user", author=ANA, text="I have a cat named Tom.")
    draft = NoteDraft("Has a cat named Tom.", Kind.FACT, Scope.DIRECT)
    candidate, event = suggestion(
        draft, "extractor", "rules", Cause(info.id, turn), sensitive=False, ambiguous=False
    )
    with store.write() as txn:
        journal.append(store, txn, ANA, [event])
    learned = candidates.approve(ana, candidate, 1, apply_now=True)["applied_note"]
    newer = notes.edit_note(ana, learned, text="Has a cat named Tom, who is old.")
    kept = _add(ana, "Likes tea.")
    payloads = _payloads(store)

    shown = bulk_notes.about(ana, "tom")
    assert {n.id for n in shown.notes} == {learned, newer}  # the closed old version too
    shown = bulk_notes.preview(ana, [newer], BulkAction.FORGET)
    done = bulk_notes.apply(ana, shown)
    assert done.payloads_erased == 3  # both versions' text and the suggestion's
    assert _payloads(store) == payloads - 3
    forgotten = notes.get_note(ana, newer)
    assert forgotten.status is NoteStatus.DELETED
    texts = notes.texts_of(ana, [forgotten, notes.get_note(ana, learned)])
    assert set(texts.values()) == {None}
    assert notes.texts_of(ana, [notes.get_note(ana, kept)])[kept] == "Likes tea."
    with store.read() as conn:
        last = list(journal.events_of_types(conn, ANA, [EventType.DELETED]))[-1]
    assert isinstance(last.body, Deleted) and len(last.body.shredded) == 3
    assert describe(last).startswith(f"forgot note {newer}: deleted it and erased its words")
    assert verify(store).ok  # the chain explains every payload it lost
    assert bulk_notes.about(ana, "tom").notes == ()  # nothing left to find
    change = undo.last_change(ana, 0)
    assert change is not None
    with pytest.raises(StateConflict, match="forgotten"):
        undo.undo(ana, change.seq, 0)


def test_issue21_item7_a_closed_note_forgotten_stays_closed(ana: PersonSession) -> None:
    old = _add(ana, "Worked at the bakery on Elm street.")
    notes.delete_note(ana, old, "changed jobs at the bakery")
    shown = bulk_notes.about(ana, "bakery")
    assert [n.id for n in shown.notes] == [old]
    bulk_notes.apply(ana, shown)
    note = notes.get_note(ana, old)
    assert note.status is NoteStatus.DELETED
    assert notes.texts_of(ana, [note])[old] is None
    with ana.store.read() as conn:
        reasons = journal.texts(ana.store, conn, ANA, [note.closure.seq])  # type: ignore[union-attr]
    assert set(reasons.values()) == {None}  # the reason named the bakery too
    assert verify(ana.store).ok


def test_issue21_item7_notes_created_after_a_point_listed_counted_and_in_the_past(
    ana: PersonSession, clock: Any
) -> None:
    _add(ana, "Old news.")
    mark = _head(ana)
    clock.advance(timedelta(minutes=1))
    fresh = [_add(ana, f"Fresh {i}.") for i in range(2)]
    since = NoteFilter(created_after_seq=mark, order="created")
    total, listed = notes.page(ana, since, offset=0, limit=10)
    assert total == 2 and [n.id for n in listed] == fresh
    clock.advance(timedelta(minutes=1))
    then = notes.notes_then(ana, clock.now(), since)
    assert then.total == 2 and [n.id for n in then.page(0, 10)] == fresh
