"""The fold: F1-F5, and time travel."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.engine.fold import AUDIT_ONLY, FoldError, apply_event, fold, fold_as_of
from engram.engine.unscoped import unscoped_notes
from engram.model.event_bodies import decode_body
from engram.model.events import Cause, Event, EventType, NewEvent
from engram.model.ids import ConversationId, NoteId, PersonId
from engram.model.notes import NoteStatus, PersonMemory
from engram.store import journal as journal_store
from engram.store import projection_memory
from engram.store.store import Store
from tests.conftest import START
from tests.journals import PERSON, journals


def _events(*specs: tuple[EventType, dict[str, object]], cause: Cause | None = None) -> list[Event]:
    return [
        Event(
            PERSON,
            seq,
            START + timedelta(minutes=seq),
            "extractor",
            kind,
            decode_body(kind, body),
            cause,
        )
        for seq, (kind, body) in enumerate(specs, start=1)
    ]


def _add(
    note: str, conversation: str = "c_1", scope: str = "direct", bp: int = 6000
) -> tuple[EventType, dict[str, object]]:
    return (
        EventType.NOTE_ADDED,
        {
            "note": note,
            "kind": "fact",
            "scope": scope,
            "durability": "lasting",
            "confidence_bp": bp,
            "origin": conversation,
            "source": {"conversation": conversation, "turn": "t_1"},
        },
    )


def _restate(note: str, conversation: str) -> tuple[EventType, dict[str, object]]:
    return EventType.RESTATED, {
        "note": note,
        "source": {"conversation": conversation, "turn": None},
    }


def _notes(memory: PersonMemory) -> dict[str, object]:
    return {n.id: n for n in unscoped_notes(memory)}


def test_F1_contradiction_closes_old_interval_and_keeps_both() -> None:
    events = _events(
        _add("n_old"), _add("n_new"), (EventType.CONTRADICTED, {"old": "n_old", "new": "n_new"})
    )
    memory = fold(events, PersonMemory(PERSON))
    old = memory.unscoped_note(NoteId("n_old"))
    new = memory.unscoped_note(NoteId("n_new"))
    assert old is not None and new is not None
    assert old.status is NoteStatus.CONTRADICTED
    assert old.valid_to == events[2].at
    assert old.closure is not None and old.closure.by_note == "n_new"
    assert new.is_active and new.valid_to is None
    assert len(unscoped_notes(memory)) == 2


def test_F2_restatement_adds_a_source_not_a_note() -> None:
    memory = fold(_events(_add("n_1"), _restate("n_1", "c_2")), PersonMemory(PERSON))
    assert memory.note_count() == 1
    note = memory.unscoped_note(NoteId("n_1"))
    assert note is not None
    assert [s.conversation for s in note.sources] == ["c_1", "c_2"]


def test_F3_confidence_is_initial_plus_500_per_independent_corroborator_capped() -> None:
    events = _events(
        _add("n_1", bp=8800),
        _restate("n_1", "c_1"),  # the first source again: not independent
        _restate("n_1", "c_2"),
        _restate("n_1", "c_2"),  # same conversation twice counts once
        _restate("n_1", "c_3"),
        _restate("n_1", "c_4"),
    )
    memory = fold(events, PersonMemory(PERSON))
    note = memory.unscoped_note(NoteId("n_1"))
    assert note is not None
    assert note.corroborators == ("c_2", "c_3", "c_4")
    assert note.confidence_bp == 10_000  # 8800 + 1500 capped
    partial = fold(events[:3], PersonMemory(PERSON)).unscoped_note(NoteId("n_1"))
    assert partial is not None and partial.confidence_bp == 9_300
    # replay reproduces the same value
    assert fold(events, PersonMemory(PERSON)).unscoped_note(NoteId("n_1")) == note


def test_F4_merge_never_combines_private_with_portable() -> None:
    events = _events(
        _add("n_private", scope="direct"),
        _add("n_portable", scope="portable"),
        (EventType.MERGED, {"into": "n_portable", "merged": ["n_private"]}),
    )
    with pytest.raises(FoldError, match="scope classes"):
        fold(events, PersonMemory(PERSON))


def test_F4_merge_within_a_scope_class_combines_sources() -> None:
    events = _events(
        _add("n_a", "c_1", scope="direct"),
        _add("n_b", "c_2", scope="unspecified"),
        (EventType.MERGED, {"into": "n_a", "merged": ["n_b"]}),
    )
    memory = fold(events, PersonMemory(PERSON))
    merged = memory.unscoped_note(NoteId("n_b"))
    into = memory.unscoped_note(NoteId("n_a"))
    assert merged is not None and merged.status is NoteStatus.MERGED
    assert into is not None and into.corroborators == ("c_2",)


@settings(max_examples=150, deadline=None)
@given(journal=journals(), data=st.data())
def test_F5_any_chunking_folds_to_the_same_state(journal: list[Event], data: st.DataObject) -> None:
    whole = fold(journal, PersonMemory(PERSON))
    cuts = sorted(data.draw(st.sets(st.integers(0, len(journal)), max_size=6)))
    state = PersonMemory(PERSON)
    previous = 0
    for cut in [*cuts, len(journal)]:
        state = fold(journal[previous:cut], state)
        previous = cut
    assert state == whole


@settings(max_examples=60, deadline=None)
@given(journal=journals())
def test_F5_fold_is_pure_and_deterministic(journal: list[Event]) -> None:
    start = PersonMemory(PERSON)
    first = fold(journal, start)
    assert start == PersonMemory(PERSON)  # the start state is not touched
    assert fold(journal, PersonMemory(PERSON)) == first


def test_fold_refuses_gaps_and_other_people() -> None:
    events = _events(_add("n_1"), _add("n_2"))
    with pytest.raises(FoldError, match="does not follow"):
        fold([events[1]], PersonMemory(PERSON))
    stranger = Event(PersonId("p2"), 1, START, "x", EventType.NOTE_ADDED, events[0].body)
    with pytest.raises(FoldError, match="another person"):
        apply_event(PersonMemory(PERSON), stranger)


def test_issue15_item7_an_export_record_is_audit_only() -> None:
    """An `exported` event moves the seq and changes nothing else the fold keeps, so a
    journal with exports folds (and replays, F5) to what it folds to without them."""
    events = _events(
        _add("n_1"),
        (EventType.EXPORTED, {"what": "export", "to": "stdout"}),
        (EventType.ITEM_USED, {"notes": ["n_1"], "via": "assembly"}),
        (EventType.EXPORTED, {"what": "access_report", "to": "file"}),
    )
    with_exports = fold(events, PersonMemory(PERSON))
    without = PersonMemory(PERSON)
    for event in events:
        if event.type is not EventType.EXPORTED:
            apply_event(without, event)
        without.set_seq(event.seq)
    assert with_exports == without and with_exports.seq == 4
    assert EventType.EXPORTED in AUDIT_ONLY


def test_issue15_item7_every_event_type_is_folded_or_audit_only() -> None:
    """A new event type cannot slip past the fold unnoticed: each has a step, and the
    audit-only ones say so (an unknown type is a FoldError, never silently skipped)."""
    for kind in EventType:
        body = {"what": "export", "to": "file"} if kind in AUDIT_ONLY else {}
        try:
            event = Event(PERSON, 1, START, "x", kind, decode_body(kind, body))
            apply_event(PersonMemory(PERSON), event)
        except FoldError as error:
            assert "does not know" not in str(error), kind
        except (KeyError, ValueError, TypeError):
            pass  # a body this test did not fill in: the step exists


def test_closed_notes_cannot_be_changed() -> None:
    events = _events(
        _add("n_1"),
        (EventType.DELETED, {"note": "n_1"}),
        (EventType.SCOPE_CHANGED, {"note": "n_1", "scope": "portable"}),
    )
    with pytest.raises(FoldError, match="closed note"):
        fold(events, PersonMemory(PERSON))


def test_time_travel_shows_the_state_at_a_moment() -> None:
    events = _events(_add("n_1"), (EventType.DELETED, {"note": "n_1"}))
    before = fold_as_of(events, PERSON, events[0].at + timedelta(seconds=1))
    after = fold_as_of(events, PERSON, events[1].at)
    assert before.unscoped_note(NoteId("n_1")).is_active  # type: ignore[union-attr]
    assert after.unscoped_note(NoteId("n_1")).status is NoteStatus.DELETED  # type: ignore[union-attr]


def test_conversation_deletion_closes_originals_and_trims_corroborations() -> None:
    events = _events(
        _add("n_from_c1", "c_1"),
        _add("n_from_c2", "c_2"),
        _restate("n_from_c2", "c_1"),
        (
            EventType.CONVERSATION_DELETED,
            {"conversation": "c_1", "closed": ["n_from_c1"], "trimmed": ["n_from_c2"]},
        ),
    )
    memory = fold(events, PersonMemory(PERSON))
    closed = memory.unscoped_note(NoteId("n_from_c1"))
    kept = memory.unscoped_note(NoteId("n_from_c2"))
    assert closed is not None and closed.status is NoteStatus.DELETED
    assert kept is not None and kept.is_active and kept.corroborators == ()
    assert ConversationId("c_1") in memory.deleted_conversations


def test_times_round_trip_to_the_microsecond() -> None:
    from datetime import UTC, datetime, timezone

    from engram.model.clock import from_micros, to_micros

    for moment in (
        START,
        datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(2300, 1, 1, 0, 0, 0, 1, tzinfo=timezone(timedelta(hours=5))),
    ):
        assert from_micros(to_micros(moment)) == moment
    assert to_micros(datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)) == 1_000_000


_REPLAYED = itertools.count()


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(journal=journals())
def test_F5_F1_reopening_keeps_the_stored_projection_equal_to_a_fresh_replay(
    store: Store, journal: list[Event]
) -> None:
    """Issue 11 item 7: `reopened` events (F1 undone after a deletion) are folded by the
    store's projection, one append at a time, into exactly what a fresh replay gives (F5)."""
    person = PersonId(f"p{next(_REPLAYED)}")  # one store for every example, a person each
    with store.write() as txn:
        journal_store.ensure_person(store, txn, person)
        for event in journal:
            new = NewEvent(event.type, event.actor, event.body, event.cause)
            journal_store.append(store, txn, person, [new])
    with store.read() as conn:
        replayed = fold(journal_store.events(conn, person), PersonMemory(person))
        assert projection_memory.matches_replay(conn, person, replayed)
        assert projection_memory.unscoped_memory(conn, person) == replayed
