"""Issue 19 item 3: a search pool that the journal moved past is read again reusing the
texts it had opened (a text never changes where it is kept) — but never past an event that
removed texts (C4: a conversation deleted; a note forgotten). In this process such an event
is an erasure, which drops every pool; a cache still held when it shows is one another
process's erasure has not yet reached, which the last test puts back."""

from __future__ import annotations

import pytest

from engram.control import bulk_notes, notes
from engram.control.bulk_notes import BulkAction
from engram.control.erase import erase_person
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.notes import NoteFilter
from engram.model.scope import Kind, Scope
from engram.runtime import search_pool as search_pool_module
from engram.runtime.conversations import start_conversation
from engram.runtime.search_pool import search_pool
from engram.store.store import Store

ANA = PersonId("ana")


@pytest.fixture
def ana(store: Store) -> PersonSession:
    start_conversation(store, [ANA])
    return PersonSession.open(store, ANA)


def _texts(store: Store, session: PersonSession) -> set[str]:
    pool = search_pool(store, ANA, notes.own_audience(session))
    assert pool is not None
    return {w.item.text for w in pool}


def test_issue19_item3_a_moved_pool_reuses_its_texts_and_sees_new_ones(
    store: Store, ana: PersonSession
) -> None:
    notes.add_note(ana, "Keeps bees in Oslo.", Kind.FACT, Scope.DIRECT)
    assert _texts(store, ana) == {"Keeps bees in Oslo."}
    held = store.plaintext_caches["search_pools"].held
    (pool,) = held.values()
    cello = notes.add_note(ana, "Plays the cello.", Kind.FACT, Scope.DIRECT)
    assert _texts(store, ana) == {"Keeps bees in Oslo.", "Plays the cello."}
    notes.edit_note(ana, cello, text="Plays the viola.")
    assert _texts(store, ana) == {"Keeps bees in Oslo.", "Plays the viola."}
    (again,) = held.values()
    assert again is not pool and again.head != pool.head


def test_issue19_item3_a_pool_is_not_reused_past_an_event_that_removed_texts(
    store: Store, ana: PersonSession
) -> None:
    """Belt and braces: such an event also closes the notes it took the words of, so no
    search could show them; the pool still reads every text again past it."""
    first = notes.add_note(ana, "Keeps bees in Oslo.", Kind.FACT, Scope.DIRECT)
    _texts(store, ana)
    (pool,) = store.plaintext_caches["search_pools"].held.values()
    notes.add_note(ana, "Plays the cello.", Kind.FACT, Scope.DIRECT)
    with store.read() as conn:
        assert search_pool_module._texts_stand(conn, ANA, pool.head)
    bulk_notes.apply(ana, bulk_notes.preview(ana, [first], BulkAction.FORGET))
    with store.read() as conn:
        assert not search_pool_module._texts_stand(conn, ANA, pool.head)


def test_issue21_item7_a_forget_elsewhere_is_not_found_by_words_held_here(
    store: Store, ana: PersonSession
) -> None:
    """The inspector's text index (control.note_cache), held by a window while another
    process forgets a note, reads the texts again when it catches up: "oslo" no longer
    finds the forgotten note, even among closed ones."""
    first = notes.add_note(ana, "Keeps bees in Oslo.", Kind.FACT, Scope.DIRECT)
    notes.add_note(ana, "Plays the cello.", Kind.FACT, Scope.DIRECT)
    every = NoteFilter(statuses=None, order="created")
    assert notes.matching_text(ana, every, "oslo").finish() == 1
    held = store.plaintext_caches["person_notes"]
    bulk_notes.apply(ana, bulk_notes.preview(ana, [first], BulkAction.FORGET))
    store.plaintext_caches["person_notes"] = held  # as in a window not yet let go
    assert notes.matching_text(ana, every, "oslo").finish() == 0


def test_issue19_item3_C3_a_pool_held_for_a_person_erased_elsewhere_goes_at_the_next_search(
    store: Store, ana: PersonSession
) -> None:
    """Another process's erasure reaches this one's caches by a release; a pool still held
    when the next search comes (the release not yet seen) is let go by that search, not
    kept beside the empty answer."""
    notes.add_note(ana, "Keeps bees in Oslo.", Kind.FACT, Scope.DIRECT)
    audience = notes.own_audience(ana)
    _texts(store, ana)
    pools = store.plaintext_caches["search_pools"]
    erase_person(ana, ANA)
    store.plaintext_caches["search_pools"] = pools  # as in a process not yet released
    assert search_pool(store, ANA, audience) in ((), None)
    assert not pools.held  # the erased person's texts are no longer held
