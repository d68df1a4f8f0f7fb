"""M3: reads never serve a transient note past its four hours, whether or not the
maintenance pass has run — assembly, recall and reads by id all stop at the same moment
the pass would retire it."""

from __future__ import annotations

from datetime import timedelta

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.engine.unscoped import unscoped_audience
from engram.model.clock import ManualClock
from engram.model.ids import PersonId
from engram.model.scope import Durability, Kind, Scope
from engram.runtime.context import read_eligible, read_scoped
from engram.runtime.memory_tools import find_items
from engram.store import journal
from engram.store.store import Store

ANA = PersonId("ana")


def _texts(store: Store) -> list[str]:
    return [n.text for n in read_scoped(store, ANA, unscoped_audience(ANA)).notes]


def test_M3_a_transient_note_leaves_every_read_at_four_hours_without_maintenance(
    store: Store, clock: ManualClock
) -> None:
    with store.write() as txn:
        journal.ensure_person(store, txn, ANA)
    session = PersonSession(store, ANA, ANA)
    airport = add_note(
        session, "At the airport.", Kind.FACT, Scope.DIRECT, durability=Durability.TRANSIENT
    )
    add_note(session, "Lives in Porto.", Kind.FACT, Scope.DIRECT)
    clock.advance(timedelta(hours=3, minutes=59))
    assert sorted(_texts(store)) == ["At the airport.", "Lives in Porto."]
    assert [n.text for n in read_eligible(store, ANA, unscoped_audience(ANA), [airport])]
    clock.advance(timedelta(minutes=1))  # no maintenance pass has run
    assert _texts(store) == ["Lives in Porto."]
    assert read_eligible(store, ANA, unscoped_audience(ANA), [airport]) == []


def test_M3_memory_search_stops_finding_a_transient_note_at_four_hours_though_its_pool_is_held(
    store: Store, clock: ManualClock
) -> None:
    """memory_search looks through a held pool (runtime.search_pool) that stays while the
    journal does not move: the clock alone moving past a transient note's four hours must
    still take it out, as every other read does."""
    with store.write() as txn:
        journal.ensure_person(store, txn, ANA)
    session = PersonSession(store, ANA, ANA)
    add_note(
        session, "At the airport gate.", Kind.FACT, Scope.DIRECT, durability=Durability.TRANSIENT
    )
    add_note(session, "Flies from the airport in Porto.", Kind.FACT, Scope.DIRECT)

    def found(query: str | None) -> list[str]:
        return sorted(
            i["text"] for i in find_items(store, ANA, unscoped_audience(ANA), query, 25)["items"]
        )

    clock.advance(timedelta(hours=3, minutes=59))
    assert found("airport") == ["At the airport gate.", "Flies from the airport in Porto."]
    clock.advance(timedelta(minutes=1))  # the journal has not moved: the pool is held
    assert found("airport") == ["Flies from the airport in Porto."]
    assert found(None) == ["Flies from the airport in Porto."]
