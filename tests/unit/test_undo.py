"""Issue 8 item 18: undo of the actor's last edit, change of scope or deletion (C2, C4, C5).

An undo is one new `undone` journal event; nothing earlier is rewritten, the audit log shows
both steps, replay (verify) reproduces it, and a note that changed since is never clobbered.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from sqlalchemy import select

from engram.control import notes, undo
from engram.control.conversations import delete_conversation
from engram.control.forensics import audit_log
from engram.control.session import PersonSession
from engram.engine.fold import FoldError, fold
from engram.engine.unscoped import unscoped_notes
from engram.model.clock import ManualClock
from engram.model.errors import NotAllowed, StateConflict
from engram.model.event_bodies import Deleted, NoteAdded, Undone
from engram.model.events import Cause, Event, EventType
from engram.model.ids import NoteId, PersonId
from engram.model.notes import NoteStatus, PersonMemory
from engram.model.scope import Kind, Scope
from engram.runtime.context import record_use
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.note_writes import NoteDraft, contradict, learn_note, restate
from engram.store import journal, projection_memory, schema
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE, START
from tests.journals import PERSON, journals

ANA = PersonId("ana")


@pytest.fixture
def ana(store: Store) -> PersonSession:
    start_conversation(store, [ANA])
    return PersonSession.open(store, ANA)


def _journal_rows(store: Store) -> list[tuple[object, ...]]:
    J = schema.journal
    with store.read() as conn:
        return [
            tuple(r) for r in conn.execute(select(J).where(J.c.person == ANA).order_by(J.c.seq))
        ]


def _texts(session: PersonSession) -> list[str | None]:
    return [v.text for v in notes.list_notes(session)]


def test_issue8_item18_undo_edit_restores_the_old_text_as_a_new_version(
    store: Store, ana: PersonSession
) -> None:
    note = notes.add_note(ana, "Prefers short answers.", Kind.PREFERENCE, Scope.DIRECT)
    start = undo.session_start(ana)
    edited = notes.edit_note(ana, note, text="Prefers long answers.", scope=Scope.PORTABLE)
    before = _journal_rows(store)

    change = undo.last_change(ana, start)
    assert change is not None and change.action == "edit" and change.note == edited
    assert change.label == "Undo edit of “Prefers long answers.”"
    done = undo.undo(ana, change.seq, start)

    [restored] = notes.list_notes(ana)
    assert done.note == restored.note.id and restored.note.id not in (note, edited)
    assert restored.text == "Prefers short answers." and restored.note.scope is Scope.DIRECT
    assert restored.note.supersedes == edited
    closed = notes.get_note(ana, edited)
    assert closed.status is NoteStatus.CORRECTED and closed.closure is not None
    assert closed.closure.type is EventType.UNDONE and closed.superseded_by == done.note
    # History is never rewritten: every earlier row is byte-identical, one event was added.
    after = _journal_rows(store)
    assert after[: len(before)] == before and len(after) == len(before) + 1
    # The audit log shows both steps; the lineage shows all three versions.
    actions = [row["action"] for row in audit_log(ana)[-2:]]
    assert actions[0] == f"note {note} corrected as {edited}"
    assert actions[1].startswith(f"undid event {change.seq} (an edit)")
    versions = notes.show_note(ana, done.note)["versions"]
    assert [v["id"] for v in versions] == [note, edited, done.note]
    assert verify(store).ok


def test_issue8_item18_undo_rescope_sets_the_scope_back_on_the_same_note(
    store: Store, ana: PersonSession
) -> None:
    note = notes.add_note(ana, "Has a dog.", Kind.FACT, Scope.UNSPECIFIED)
    start = undo.session_start(ana)
    notes.edit_note(ana, note, scope=Scope.PORTABLE)
    change = undo.last_change(ana, start)
    assert change is not None and change.action == "rescope"
    done = undo.undo(ana, change.seq, start)
    held = notes.get_note(ana, note)
    assert done.note == note and held.scope is Scope.UNSPECIFIED and held.is_active
    assert [(c.type, c.detail) for c in held.changes] == [
        (EventType.SCOPE_CHANGED, "unspecified -> portable"),
        (EventType.UNDONE, "portable -> unspecified"),
    ]
    assert audit_log(ana)[-1]["action"].endswith(f"note {note} back to unspecified")
    assert verify(store).ok


def test_issue17_item4_undo_delete_reopens_the_same_note(
    store: Store, ana: PersonSession, clock: ManualClock
) -> None:
    """Undoing a deletion reopens the note that was deleted — same id, author, sources and
    usage, its interval continuing — not a copy recorded by whoever undid it; the audit log
    and the note's history show the deletion and the undo; time travel to a moment between
    them shows it deleted."""
    first = start_conversation(store, [ANA]).id
    turn = append_turn(store, first, role="user", author=ANA, text="I'm allergic to penicillin.")
    draft = NoteDraft("Allergic to penicillin.", Kind.FACT, Scope.DIRECT)
    note = learn_note(store, ANA, draft, first, turn)
    second = start_conversation(store, [ANA]).id
    again = append_turn(store, second, role="user", author=ANA, text="Penicillin: allergic.")
    restate(store, ANA, note, second, again)  # a corroborator
    record_use(store, ANA, [note], "assembly", Cause(second, again))
    before = notes.show_note(ana, note)
    staff = PersonSession(store, ANA, "staff:dana")
    start = undo.session_start(staff)
    notes.delete_note(staff, note, reason="Oops")
    deleted_at = notes.get_note(ana, note).valid_to
    assert deleted_at is not None
    clock.advance(timedelta(minutes=5))
    change = undo.last_change(staff, start)
    assert change is not None and change.action == "delete"
    assert change.text == "Allergic to penicillin."
    done = undo.undo(staff, change.seq, start)

    assert done.note == note
    after = notes.show_note(ana, note)
    for key in ("id", "actor", "text", "sources", "corroborators", "usage", "valid_from"):
        assert after[key] == before[key], key
    assert after["status"] == "active" and after["valid_to"] is None
    assert after["confidence"] == before["confidence"]
    assert [h["type"] for h in after["history"]][-2:] == ["deleted", "undone"]
    assert [v.note.id for v in notes.list_notes(ana, include_closed=True)] == [note]  # no copy
    deletion, undoing = [row["action"] for row in audit_log(ana)[-2:]]
    assert deletion == f"deleted note {note}"
    assert undoing == f"undid event {change.seq} (a deletion): note {note} restored"
    # Between the deletion and its undo, the note was not there (C2, time travel).
    assert notes.list_notes(ana, as_of=deleted_at) == []
    assert [v.text for v in notes.list_notes(ana)] == ["Allergic to penicillin."]
    # No second undo of the same deletion.
    with pytest.raises(StateConflict, match="already undone"):
        undo.undo(staff, change.seq, start)
    assert verify(store).ok


def test_issue17_item4_F5_a_reopened_note_folds_the_same_in_every_split_and_from_the_store(
    store: Store, ana: PersonSession, store_path: Path
) -> None:
    """F5 without hypothesis: the journal of a deletion undone (with a contradiction it had
    undone, closed again) folds to one state all at once, split at every point, and as the
    store's projection holds it."""
    conversation = start_conversation(store, [ANA]).id
    turn = append_turn(store, conversation, role="user", author=ANA, text="Lyon, then Grenoble.")
    lyon = learn_note(
        store, ANA, NoteDraft("Lives in Lyon.", Kind.FACT, Scope.DIRECT), conversation, turn
    )
    grenoble = contradict(
        store,
        ANA,
        lyon,
        NoteDraft("Lives in Grenoble.", Kind.FACT, Scope.DIRECT),
        conversation,
        turn,
    )
    start = undo.session_start(ana)
    notes.delete_note(ana, grenoble)  # Lyon holds again …
    change = undo.last_change(ana, start)
    assert change is not None
    undo.undo(ana, change.seq, start)  # … and Grenoble again, the same note
    with store.read() as conn:
        events = list(journal.events(conn, ANA))
        stored = projection_memory.unscoped_memory(conn, ANA)
        whole = fold(events, PersonMemory(ANA))
        assert projection_memory.matches_replay(conn, ANA, whole)
    assert stored == whole
    for cut in range(len(events) + 1):
        assert fold(events[cut:], fold(events[:cut], PersonMemory(ANA))) == whole, cut
    reopened = Store.open(str(store_path), passphrase=PASSPHRASE)  # the store opened again
    try:
        with reopened.read() as conn:
            assert projection_memory.unscoped_memory(conn, ANA) == whole
            assert fold(journal.events(conn, ANA), PersonMemory(ANA)) == whole
    finally:
        reopened.close()
    assert whole.unscoped_note(grenoble) == notes.get_note(ana, grenoble)
    held = whole.unscoped_note(grenoble)
    back = whole.unscoped_note(lyon)
    assert held is not None and held.is_active
    assert back is not None and back.status is NoteStatus.CONTRADICTED
    assert back.closure is not None and back.closure.by_note == grenoble


def test_issue17_item4_an_undo_written_before_keeps_its_restored_copy_on_replay() -> None:
    """Stores written before issue 17 hold deletion undos that opened a copy under a new id
    (`new` other than `restored`): their replay is unchanged, so old stores verify."""
    added = {
        "note": "n_1",
        "kind": "fact",
        "scope": "direct",
        "durability": "lasting",
        "confidence_bp": 5000,
    }
    undone = {"undoes": 2, "action": "delete", "restored": "n_1", "new": "n_2"}
    events = [
        Event(PERSON, 1, START, "x", EventType.NOTE_ADDED, NoteAdded.from_json(added)),
        Event(PERSON, 2, START, "x", EventType.DELETED, Deleted(NoteId("n_1"))),
        Event(PERSON, 3, START, "staff:dana", EventType.UNDONE, Undone.from_json(undone)),
    ]
    memory = fold(events, PersonMemory(PERSON))
    old, copy = memory.unscoped_note(NoteId("n_1")), memory.unscoped_note(NoteId("n_2"))
    assert old is not None and old.status is NoteStatus.DELETED and old.superseded_by == "n_2"
    assert copy is not None and copy.is_active and copy.actor == "staff:dana"
    # An undo in place reopens only a note a deletion closed.
    in_place = {"undoes": 1, "action": "delete", "restored": "n_1", "new": "n_1"}
    wrong = [events[0], Event(PERSON, 2, START, "x", EventType.UNDONE, Undone.from_json(in_place))]
    with pytest.raises(FoldError, match="not deleted"):
        fold(wrong, PersonMemory(PERSON))


def test_issue8_item18_last_means_this_actors_own_last_change_in_this_session(
    store: Store, ana: PersonSession
) -> None:
    first = notes.add_note(ana, "One.", Kind.FACT, Scope.DIRECT)
    notes.delete_note(ana, first)  # before the session: never undoable in it
    start = undo.session_start(ana)
    assert undo.last_change(ana, start) is None
    mine = notes.add_note(ana, "Two.", Kind.FACT, Scope.DIRECT)
    notes.edit_note(ana, mine, scope=Scope.PORTABLE)
    staff = PersonSession(store, ANA, "staff:dana")
    other = notes.add_note(staff, "Three.", Kind.FACT, Scope.DIRECT)
    notes.delete_note(staff, other)  # someone else's change does not count for ana
    change = undo.last_change(ana, start)
    assert change is not None and change.action == "rescope" and change.note == mine
    staff_change = undo.last_change(staff, start)
    assert staff_change is not None
    with pytest.raises(NotAllowed, match="made by dana \\(staff\\); you can undo only your own"):
        undo.undo(ana, staff_change.seq, start)
    with pytest.raises(NotAllowed, match="in this session"):
        undo.undo(ana, 3, start)  # ana's deletion before the session
    undo.undo(ana, change.seq, start)
    # An undo is the actor's last change now: nothing more to undo, and no undoing twice.
    assert undo.last_change(ana, start) is None
    with pytest.raises(StateConflict, match="already undone"):
        undo.undo(ana, change.seq, start)


def test_issue8_item18_a_note_changed_since_is_never_clobbered(
    store: Store, ana: PersonSession
) -> None:
    conversation = start_conversation(store, [ANA]).id
    turn = append_turn(store, conversation, role="user", author=ANA, text="I have a cat.")
    learned = learn_note(
        store, ANA, NoteDraft("Has a cat.", Kind.FACT, Scope.DIRECT), conversation, turn
    )
    start = undo.session_start(ana)
    edited = notes.edit_note(ana, learned, text="Has two cats.")
    restate(store, ANA, edited, conversation, turn)  # the runtime heard it again meanwhile
    change = undo.last_change(ana, start)
    assert change is not None
    before = _journal_rows(store)
    with pytest.raises(StateConflict, match=r"changed after that edit.*nothing was undone"):
        undo.undo(ana, change.seq, start)
    assert _journal_rows(store) == before  # nothing half-written
    assert _texts(ana) == ["Has two cats."]
    # Only the last change can be undone: a newer change of the actor's hides an older one.
    notes.edit_note(ana, edited, scope=Scope.PORTABLE)
    with pytest.raises(StateConflict, match="only your last change"):
        undo.undo(ana, change.seq, start)


def test_issue8_item18_C4_a_restored_version_dies_with_its_conversation(
    store: Store, ana: PersonSession
) -> None:
    conversation = start_conversation(store, [ANA]).id
    turn = append_turn(store, conversation, role="user", author=ANA, text="I live in Lyon.")
    learned = learn_note(
        store, ANA, NoteDraft("Lives in Lyon.", Kind.FACT, Scope.DIRECT), conversation, turn
    )
    start = undo.session_start(ana)
    notes.edit_note(ana, learned, text="Lives in Paris.")
    change = undo.last_change(ana, start)
    assert change is not None
    done = undo.undo(ana, change.seq, start)
    restored = notes.get_note(ana, done.note)
    assert restored.origin == conversation and _texts(ana) == ["Lives in Lyon."]
    delete_conversation(ana, conversation)
    assert notes.get_note(ana, done.note).status is NoteStatus.DELETED
    assert [v.text for v in notes.list_notes(ana, include_closed=True)] == [
        None,
        "Lives in Paris.",
        None,
    ]
    assert verify(store).ok


def test_issue8_item18_undo_of_a_deletion_whose_text_is_gone_refuses(
    store: Store, ana: PersonSession
) -> None:
    conversation = start_conversation(store, [ANA]).id
    turn = append_turn(store, conversation, role="user", author=ANA, text="I'm in Rome.")
    learned = learn_note(
        store, ANA, NoteDraft("Is in Rome.", Kind.FACT, Scope.DIRECT), conversation, turn
    )
    start = undo.session_start(ana)
    notes.delete_note(ana, learned)
    change = undo.last_change(ana, start)
    staff = PersonSession(store, ANA, "staff:dana")
    delete_conversation(staff, conversation)
    assert change is not None
    with pytest.raises(StateConflict, match="text it would bring back is gone"):
        undo.undo(ana, change.seq, start)


def test_issue8_item18_fold_refuses_an_undo_that_does_not_follow() -> None:
    added = {
        "note": "n_1",
        "kind": "fact",
        "scope": "direct",
        "durability": "lasting",
        "confidence_bp": 5000,
    }
    events = [
        Event(PERSON, 1, START, "x", EventType.NOTE_ADDED, NoteAdded.from_json(added)),
        Event(
            PERSON,
            2,
            START,
            "x",
            EventType.UNDONE,
            Undone.from_json({"undoes": 1, "action": "delete", "restored": "n_1", "new": "n_2"}),
        ),
    ]
    with pytest.raises(FoldError, match="not deleted"):
        fold(events, PersonMemory(PERSON))


@settings(max_examples=120, deadline=None)
@given(journal=journals())
def test_issue8_item18_F5_undo_replays_deterministically_in_any_chunking(
    journal: list[Event],
) -> None:
    whole = fold(journal, PersonMemory(PERSON))
    halves = fold(
        journal[len(journal) // 2 :], fold(journal[: len(journal) // 2], PersonMemory(PERSON))
    )
    assert halves == whole == fold(journal, PersonMemory(PERSON))
    # A restored version always reads the text of the version it restores.
    for note in unscoped_notes(whole):
        if note.created_seq != note.text_seq:
            restored = [n for n in unscoped_notes(whole) if n.text_seq == note.text_seq]
            assert restored[0].created_seq == note.text_seq and restored[0].id != NoteId(note.id)


def test_issue8_item18_undoing_a_deletion_recloses_what_it_brought_back(
    store: Store, ana: PersonSession
) -> None:
    conversation = start_conversation(store, [ANA]).id
    turn = append_turn(store, conversation, role="user", author=ANA, text="Lyon, then Grenoble.")
    lyon = learn_note(
        store, ANA, NoteDraft("Lives in Lyon.", Kind.FACT, Scope.DIRECT), conversation, turn
    )
    grenoble = contradict(
        store,
        ANA,
        lyon,
        NoteDraft("Lives in Grenoble.", Kind.FACT, Scope.DIRECT),
        conversation,
        turn,
    )
    start = undo.session_start(ana)
    notes.delete_note(ana, grenoble)  # F1 undone: Lyon holds again
    assert _texts(ana) == ["Lives in Lyon."]
    change = undo.last_change(ana, start)
    assert change is not None and change.action == "delete"
    done = undo.undo(ana, change.seq, start)
    assert _texts(ana) == ["Lives in Grenoble."]  # what was there before the deletion
    back = notes.get_note(ana, lyon)
    assert back.status is NoteStatus.CONTRADICTED and back.closure is not None
    assert back.closure.by_note == done.note and back.closure.type is EventType.UNDONE
    assert verify(store).ok


def test_issue8_item18_a_brought_back_note_that_changed_is_not_clobbered(
    store: Store, ana: PersonSession
) -> None:
    conversation = start_conversation(store, [ANA]).id
    turn = append_turn(store, conversation, role="user", author=ANA, text="Lyon, then Grenoble.")
    lyon = learn_note(
        store, ANA, NoteDraft("Lives in Lyon.", Kind.FACT, Scope.DIRECT), conversation, turn
    )
    grenoble = contradict(
        store,
        ANA,
        lyon,
        NoteDraft("Lives in Grenoble.", Kind.FACT, Scope.DIRECT),
        conversation,
        turn,
    )
    start = undo.session_start(ana)
    notes.delete_note(ana, grenoble)
    restate(store, ANA, lyon, conversation, turn)  # Lyon was confirmed again meanwhile
    change = undo.last_change(ana, start)
    assert change is not None
    with pytest.raises(StateConflict, match="brought back has changed since"):
        undo.undo(ana, change.seq, start)
    assert _texts(ana) == ["Lives in Lyon."]
