"""Issue 19 item 4: a turn's candidates of some kinds (a shared turn's portable
preferences, its other notes) are found by an index, not by reading past the notes of
other kinds that rank above them — and they are still exactly the best-ranked ones."""

from __future__ import annotations

import random
from collections.abc import Iterator

from engram.engine.ranking import rank_key
from engram.engine.unscoped import unscoped_audience
from engram.model.events import Cause, NewEvent
from engram.model.ids import PersonId
from engram.model.scope import Audience, Kind, Scope
from engram.runtime.context import PROFILE_KINDS
from engram.runtime.conversations import start_conversation
from engram.runtime.note_writes import NoteDraft, note_added
from engram.store import journal, projection_notes
from engram.store.store import Store

ALICE = PersonId("alice")


def _add(store: Store, drafts: list[NoteDraft]) -> None:
    conversation = start_conversation(store, [ALICE]).id
    events: list[NewEvent] = [
        note_added(d, "extractor", Cause(conversation, None), conversation) for d in drafts
    ]
    with store.write() as txn:
        journal.append(store, txn, ALICE, events)


def _vm_steps(store: Store, audience: Audience, limit: int) -> Iterator[int]:
    """SQLite virtual-machine steps (in hundreds) the read of `limit` profile candidates
    takes: the work it does, whatever the machine's speed."""
    with store.read() as conn:
        driver = conn.connection.driver_connection
        assert driver is not None
        steps = [0]

        def count() -> int:
            steps[0] += 1
            return 0

        driver.set_progress_handler(count, 100)
        try:
            found = projection_notes.eligible_ranked(conn, audience, limit, PROFILE_KINDS)
        finally:
            driver.set_progress_handler(None, 100)
    assert [n.kind for n in found] == [Kind.PREFERENCE] * limit
    yield steps[0]


def test_issue19_item4_shared_preferences_are_found_without_reading_past_other_notes(
    store: Store,
) -> None:
    """Five portable preferences ranked below many portable facts: reading the best three
    costs the same with 100 facts above them as with 3,000 (it read past every fact)."""
    shared = Audience.shared(ALICE)
    prefs = [
        NoteDraft(f"Likes {i}.", Kind.PREFERENCE, Scope.PORTABLE, confidence_bp=3_000)
        for i in range(5)
    ]
    facts = [
        NoteDraft(f"Fact {i}.", Kind.FACT, Scope.PORTABLE, confidence_bp=9_000) for i in range(100)
    ]
    _add(store, prefs + facts)
    (few,) = _vm_steps(store, shared, 3)
    more = [
        NoteDraft(f"More {i}.", Kind.FACT, Scope.PORTABLE, confidence_bp=9_000)
        for i in range(2_900)
    ]
    _add(store, more)
    (many,) = _vm_steps(store, shared, 3)
    assert many <= few * 1.5 + 5, (few, many)


def test_issue19_item4_the_candidates_are_still_the_best_ranked_of_those_kinds(
    store: Store,
) -> None:
    """Against a plain reference (filter, then sort by the engine's rank key), for a shared
    and a subject-alone audience, some kinds or all, over notes of every scope and kind."""
    _best_ranked(store)


def test_issue19_item4_the_candidates_are_the_best_ranked_on_postgresql(postgres_url: str) -> None:
    """The same read, the same answers, on PostgreSQL."""
    from engram.store import crypto
    from tests.conftest import PASSPHRASE

    store = Store.create(postgres_url, passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    try:
        _best_ranked(store)
    finally:
        store.close()


def _best_ranked(store: Store) -> None:
    rng = random.Random(19)
    drafts = [
        NoteDraft(
            f"Note {i}.",
            rng.choice(list(Kind)),
            rng.choice(list(Scope)),
            confidence_bp=rng.choice([3_000, 6_000, 6_000, 9_000]),
        )
        for i in range(400)
    ]
    _add(store, drafts)
    with store.read() as conn:
        every = projection_notes.unscoped_notes(conn, ALICE)
    for audience in (Audience.shared(ALICE), unscoped_audience(ALICE)):
        for kinds in (PROFILE_KINDS, frozenset({Kind.FACT}), frozenset(Kind)):
            for limit in (1, 7, 128, 1_000):
                expected = sorted(
                    (
                        n
                        for n in every
                        if n.is_active and n.scope in audience.scopes and n.kind in kinds
                    ),
                    key=rank_key,
                )[:limit]
                with store.read() as conn:
                    got = projection_notes.eligible_ranked(conn, audience, limit, kinds)
                assert [n.id for n in got] == [n.id for n in expected], (audience, kinds, limit)
