"""The maintenance pass: M1 profile, M2 duplicates, M3 transient expiry — each a journal
event, so replay reproduces it."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.control.notes import add_note, delete_note, list_notes, profile_document
from engram.control.session import PersonSession
from engram.model.clock import ManualClock
from engram.model.ids import PersonId
from engram.model.notes import NoteStatus
from engram.model.scope import Durability, Kind, Scope
from engram.runtime.maintenance import maintain_person
from engram.store import journal
from engram.store.store import Store
from engram.store.verify import verify

ANA = PersonId("ana")


def _session(store: Store) -> PersonSession:
    with store.write() as txn:
        journal.ensure_person(store, txn, ANA)
    return PersonSession(store, ANA, ANA)


def _status(store: Store, session: PersonSession) -> dict[str, NoteStatus]:
    return {v.text or "": v.note.status for v in list_notes(session, include_closed=True)}


def test_M3_transient_notes_retire_four_hours_after_learning_lasting_ones_never(
    store: Store, clock: ManualClock
) -> None:
    session = _session(store)
    add_note(session, "At the airport.", Kind.FACT, Scope.DIRECT, durability=Durability.TRANSIENT)
    add_note(session, "Lives in Porto.", Kind.FACT, Scope.DIRECT)
    clock.advance(timedelta(hours=3, minutes=58))
    assert maintain_person(store, ANA)["retired"] == []
    clock.advance(timedelta(minutes=2))
    assert len(maintain_person(store, ANA)["retired"]) == 1
    clock.advance(timedelta(days=4000))
    assert maintain_person(store, ANA)["retired"] == []
    statuses = _status(store, session)
    assert statuses == {"At the airport.": NoteStatus.RETIRED, "Lives in Porto.": NoteStatus.ACTIVE}
    assert verify(store).ok  # replay reproduces it


def test_M2_exact_duplicates_go_and_the_oldest_stays_within_one_scope(store: Store) -> None:
    session = _session(store)
    first = add_note(session, "Likes tea.", Kind.PREFERENCE, Scope.DIRECT)
    second = add_note(session, "Likes  tea.", Kind.PREFERENCE, Scope.DIRECT)
    add_note(session, "Likes tea.", Kind.PREFERENCE, Scope.PORTABLE)  # another scope: kept
    add_note(session, "Likes tea.", Kind.FACT, Scope.DIRECT)  # another kind: kept
    report = maintain_person(store, ANA)
    assert report["duplicates_removed"] == [{"note": second, "kept": first}]
    views = {v.note.id: v.note for v in list_notes(session, include_closed=True)}
    assert views[second].status is NoteStatus.REMOVED and views[first].is_active
    assert sum(1 for n in views.values() if n.is_active) == 3
    assert maintain_person(store, ANA)["duplicates_removed"] == []
    assert verify(store).ok


def test_M1_the_profile_document_is_rebuilt_from_active_notes_only_when_it_changes(
    store: Store,
) -> None:
    session = _session(store)
    add_note(session, "French", Kind.STYLE, Scope.PORTABLE, topic="language")
    add_note(session, "Warm and brief", Kind.STYLE, Scope.PORTABLE, topic="tone")
    add_note(session, "Prefers mornings.", Kind.PREFERENCE, Scope.DIRECT, confidence_bp=9000)
    add_note(session, "Likes tea.", Kind.PREFERENCE, Scope.DIRECT, confidence_bp=6000)
    add_note(session, "Lives in Porto.", Kind.FACT, Scope.DIRECT)
    assert maintain_person(store, ANA)["profile_rebuilt"] is True
    assert profile_document(session) == (
        "Language: French\nTone: Warm and brief\n"
        "Preference: Prefers mornings.\nPreference: Likes tea."
    )
    assert maintain_person(store, ANA)["profile_rebuilt"] is False  # nothing changed
    add_note(session, "Prefers email.", Kind.PREFERENCE, Scope.DIRECT, confidence_bp=7000)
    assert maintain_person(store, ANA)["profile_rebuilt"] is True
    assert verify(store).ok


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    notes=st.lists(
        st.tuples(
            st.sampled_from(["Likes tea.", "Lives in Porto.", "Prefers email."]),
            st.sampled_from([Kind.FACT, Kind.PREFERENCE]),
            st.sampled_from([Scope.DIRECT, Scope.PORTABLE]),
            st.sampled_from(list(Durability)),
            st.integers(0, 10),
        ),
        max_size=8,
    )
)
def test_M1_M2_M3_a_second_pass_changes_nothing_and_replay_agrees(
    store: Store, clock: ManualClock, notes: list[tuple[str, Kind, Scope, Durability, int]]
) -> None:
    session = _session(store)
    for text, kind, scope, durability, hours in notes:
        clock.advance(timedelta(hours=hours))
        add_note(session, text, kind, scope, durability=durability)
    maintain_person(store, ANA)
    again = maintain_person(store, ANA)
    assert again["retired"] == [] and again["duplicates_removed"] == []
    assert again["profile_rebuilt"] is False
    assert verify(store).ok


def test_M1_C4_the_profile_keeps_no_copy_of_a_deleted_conversations_words(store: Store) -> None:
    from engram.control.conversations import delete_conversation
    from engram.runtime.conversations import start_conversation

    session = _session(store)
    info = start_conversation(store, [ANA])
    learned = add_note(
        session, "Likes green tea.", Kind.PREFERENCE, Scope.DIRECT, conversation=info.id
    )
    own = add_note(session, "Prefers mornings.", Kind.PREFERENCE, Scope.DIRECT)
    maintain_person(store, ANA)
    assert "Likes green tea." in profile_document(session)
    delete_conversation(session, info.id)
    assert profile_document(session) == "Preference: Prefers mornings."
    delete_note(session, own)
    assert profile_document(session) == ""  # a deleted note leaves the profile at once
    assert learned and verify(store).ok


def test_M2_M3_a_lasting_note_never_gives_way_to_a_transient_duplicate(
    store: Store, clock: ManualClock
) -> None:
    session = _session(store)
    add_note(session, "Is in Porto.", Kind.FACT, Scope.DIRECT, durability=Durability.TRANSIENT)
    add_note(session, "Is in Porto.", Kind.FACT, Scope.DIRECT)
    assert maintain_person(store, ANA)["duplicates_removed"] == []
    clock.advance(timedelta(hours=5))
    maintain_person(store, ANA)
    assert [v.text for v in list_notes(session)] == ["Is in Porto."]
