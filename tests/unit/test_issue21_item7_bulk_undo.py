"""Issue 21 item 7: a change of many notes at once is undone whole — one undo gives back
every note a bulk deletion took (and closes again what it had brought back) or puts back
every note's own scope; a forget is refused; if one of the notes changed since, nothing is
undone. Each event of a bulk change says how many notes changed `together`."""

from __future__ import annotations

import pytest

from engram.control import bulk_notes, candidates, notes, undo
from engram.control.bulk_notes import BulkAction
from engram.control.session import PersonSession
from engram.engine.fold import fold
from engram.model.errors import StateConflict
from engram.model.event_bodies import Deleted, ScopeChanged, Undone
from engram.model.events import Cause, Event, EventType, NewEvent
from engram.model.ids import NoteId, PersonId
from engram.model.notes import NoteStatus, PersonMemory
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.note_writes import NoteDraft, suggestion
from engram.store import journal, projection_memory
from engram.store.store import Store
from engram.store.verify import verify

ANA = PersonId("ana")


@pytest.fixture
def dana(store: Store) -> PersonSession:
    start_conversation(store, [ANA])
    return PersonSession.open(store, ANA, "staff:dana")


def _add(session: PersonSession, text: str, scope: Scope = Scope.DIRECT) -> NoteId:
    return NoteId(notes.add_note(session, text, Kind.FACT, scope))


def _contradicting(session: PersonSession, old: NoteId, text: str) -> NoteId:
    """A note approved from a suggestion that contradicts `old` (which closes)."""
    store = session.store
    info = start_conversation(store, [ANA])
    turn = append_turn(store, info.id, role="user", author=ANA, text=text)
    candidate, event = suggestion(
        NoteDraft(text, Kind.FACT, Scope.DIRECT),
        "extractor",
        "rules",
        Cause(info.id, turn),
        sensitive=False,
        ambiguous=False,
        contradicts=old,
    )
    with store.write() as txn:
        journal.append(store, txn, ANA, [event])
    candidates.approve(session, candidate, 1, apply_now=True)
    made = candidates.get_candidate(session, candidate)["note"]
    assert notes.get_note(session, old).status is NoteStatus.CONTRADICTED
    return NoteId(made)


def _events_after(store: Store, seq: int) -> list[Event]:
    with store.read() as conn:
        return list(journal.events(conn, ANA, after_seq=seq))


def _replays_the_same(store: Store) -> None:
    with store.read() as conn:
        whole = fold(list(journal.events(conn, ANA)), PersonMemory(ANA))
        assert projection_memory.matches_replay(conn, ANA, whole)
    assert verify(store).ok


def test_issue21_item7_undo_gives_back_every_note_a_bulk_deletion_took(
    dana: PersonSession,
) -> None:
    lyon = _add(dana, "Lives in Lyon.")
    since = undo.session_start(dana)
    grenoble = _contradicting(dana, lyon, "Lives in Grenoble.")
    ids = [grenoble, _add(dana, "Keeps bees."), _add(dana, "Plays the cello.")]
    bulk_notes.apply(dana, bulk_notes.preview(dana, ids, BulkAction.DELETE), "not true")
    assert notes.get_note(dana, lyon).is_active  # the deletion brought Lyon back
    written = [e for e in _events_after(dana.store, since) if e.type is EventType.DELETED]
    assert [e.body.together for e in written if isinstance(e.body, Deleted)] == [3, 3, 3]

    change = undo.last_change(dana, since)
    assert change is not None and change.count == 3
    assert change.label == "Undo deletion of 3 notes"
    before = undo.session_start(dana)
    done = undo.undo(dana, change.seq, since)
    assert done.count == 3 and done.note == grenoble
    assert all(notes.get_note(dana, i).is_active for i in ids)  # every one, not the last
    assert notes.get_note(dana, lyon).status is NoteStatus.CONTRADICTED  # closed again
    undos = _events_after(dana.store, before)
    assert [e.type for e in undos] == [EventType.UNDONE] * 3
    assert len({e.at for e in undos}) == 1  # one transaction
    assert sorted(e.body.undoes for e in undos if isinstance(e.body, Undone)) == [
        e.seq for e in written
    ]
    assert undo.last_change(dana, since) is None  # an undo is not undone
    _replays_the_same(dana.store)


def test_issue21_item7_undo_puts_back_each_notes_own_scope(dana: PersonSession) -> None:
    direct = _add(dana, "Keeps bees.", Scope.DIRECT)
    loose = _add(dana, "Plays the cello.", Scope.UNSPECIFIED)
    since = undo.session_start(dana)
    shown = bulk_notes.preview(dana, [direct, loose], BulkAction.RESCOPE, Scope.PORTABLE)
    bulk_notes.apply(dana, shown)
    rescoped = [e.body for e in _events_after(dana.store, since)]
    assert all(isinstance(b, ScopeChanged) and b.together == 2 for b in rescoped)
    change = undo.last_change(dana, since)
    assert change is not None and change.label == "Undo change of scope of 2 notes"
    undo.undo(dana, change.seq, since)
    assert notes.get_note(dana, direct).scope is Scope.DIRECT
    assert notes.get_note(dana, loose).scope is Scope.UNSPECIFIED
    _replays_the_same(dana.store)


def test_issue21_item7_one_note_changed_since_refuses_the_whole_undo(
    dana: PersonSession, store: Store
) -> None:
    ids = [_add(dana, f"Runs on day {i}.") for i in range(3)]
    since = undo.session_start(dana)
    bulk_notes.apply(dana, bulk_notes.preview(dana, ids, BulkAction.RESCOPE, Scope.PORTABLE))
    lee = PersonSession.open(store, ANA, "staff:lee")
    notes.edit_note(lee, ids[1], scope=Scope.UNSPECIFIED)  # someone else, meanwhile
    change = undo.last_change(dana, since)
    assert change is not None
    before = undo.session_start(dana)
    with pytest.raises(StateConflict, match=r"^That change of 3 notes cannot be undone: the"):
        undo.undo(dana, change.seq, since)
    assert _events_after(store, before) == []  # nothing written, not even for the others
    assert [notes.get_note(dana, i).scope for i in ids] == [
        Scope.PORTABLE,
        Scope.UNSPECIFIED,
        Scope.PORTABLE,
    ]


def test_issue21_item7_a_bulk_forget_is_not_undone(dana: PersonSession) -> None:
    ids = [_add(dana, "Sings in Oslo."), _add(dana, "Moved to Oslo.")]
    since = undo.session_start(dana)
    bulk_notes.apply(dana, bulk_notes.about(dana, "oslo", BulkAction.FORGET))
    change = undo.last_change(dana, since)
    assert change is not None and change.label == "Undo deletion of 2 notes"
    before = undo.session_start(dana)
    forgotten = r"^Those 2 notes were forgotten: their words were erased"
    with pytest.raises(StateConflict, match=forgotten):
        undo.undo(dana, change.seq, since)
    assert _events_after(dana.store, before) == []
    assert all(notes.get_note(dana, i).status is NoteStatus.DELETED for i in ids)


def test_issue21_item7_a_bulk_change_not_whole_in_the_journal_is_refused(
    dana: PersonSession,
) -> None:
    """An event claiming more notes changed together than the journal holds beside it (a
    writer outside the bulk path) is not taken for a whole change."""
    ids = [_add(dana, "Keeps bees."), _add(dana, "Plays the cello.")]
    since = undo.session_start(dana)
    claim = Deleted(ids[1], together=2)
    with dana.store.write() as txn:
        journal.append(dana.store, txn, ANA, [NewEvent(EventType.DELETED, dana.actor, claim)])
    change = undo.last_change(dana, since)
    assert change is not None and change.count == 1  # named as what it is: one deletion
    before = undo.session_start(dana)
    with pytest.raises(StateConflict, match="not whole in the journal"):
        undo.undo(dana, change.seq, since)
    assert _events_after(dana.store, before) == []
    assert notes.get_note(dana, ids[0]).is_active
