"""memory_search's held pool of decrypted, word-split notes (issue 10, the HTTP search
benchmark): a repeated search decrypts nothing, yet every change to what it may find —
from this store handle or another process's — is seen at once, audiences never share a
pool (S1, S2), and nothing outlives closing the store or an erasure (C3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.control.erase import erase_person
from engram.control.notes import add_note, delete_note
from engram.control.persons import ensure_person
from engram.control.session import PersonSession
from engram.engine.unscoped import unscoped_audience
from engram.model.ids import PersonId
from engram.model.scope import Audience, Kind, Scope
from engram.runtime.context import Attribution, record_use
from engram.runtime.conversations import start_conversation
from engram.runtime.memory_tools import find_items, search
from engram.store import journal
from engram.store.store import Store
from tests.conftest import PASSPHRASE

ANA = PersonId("ana")
ALONE = unscoped_audience(ANA)


@pytest.fixture
def decrypted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many journal payloads were opened, counted at the one function that opens them."""
    opened: list[int] = []
    real = journal.texts

    def counting(store: Store, conn: object, person: PersonId, seqs: object) -> object:
        found = real(store, conn, person, seqs)  # type: ignore[arg-type]
        opened.append(len(found))
        return found

    monkeypatch.setattr(journal, "texts", counting)
    return opened


def _found(store: Store, query: str, audience: Audience = ALONE) -> list[str]:
    return [i["text"] for i in find_items(store, ANA, audience, query, 25)["items"]]


def test_issue10_a_repeated_search_opens_no_payload_and_usage_keeps_the_pool(
    store: Store, decrypted: list[int]
) -> None:
    session = PersonSession(store, ANA, ANA)
    ensure_person(store, ANA)
    for i in range(20):
        add_note(session, f"Likes green tea number {i}.", Kind.PREFERENCE, Scope.DIRECT)
    assert len(_found(store, "tea")) == 20 and len(decrypted) == 1
    assert len(_found(store, "green")) == 20 and len(decrypted) == 1  # held, not reopened
    where = Attribution(ANA, start_conversation(store, [ANA]).id)
    for _ in range(3):  # the MCP tool records usage each time: no note changes
        assert search(store, where, "tea", 2)["items"]
    record_use(store, ANA, [], "search", None)
    assert len(decrypted) == 1


def test_issue10_every_note_change_is_seen_at_once(store: Store) -> None:
    session = PersonSession(store, ANA, ANA)
    ensure_person(store, ANA)
    first = add_note(session, "Likes green tea.", Kind.PREFERENCE, Scope.DIRECT)
    assert _found(store, "tea") == ["Likes green tea."]
    add_note(session, "Drinks black tea at night.", Kind.PREFERENCE, Scope.DIRECT)
    assert sorted(_found(store, "tea")) == ["Drinks black tea at night.", "Likes green tea."]
    delete_note(session, first, "asked")
    assert _found(store, "tea") == ["Drinks black tea at night."]


def test_issue10_S1_S2_audiences_never_share_a_pool(store: Store) -> None:
    session = PersonSession(store, ANA, ANA)
    ensure_person(store, ANA)
    add_note(session, "Takes tea for an illness.", Kind.FACT, Scope.DIRECT)
    add_note(session, "Takes tea with lemon.", Kind.PREFERENCE, Scope.PORTABLE)
    shared = Audience.shared(ANA)
    assert sorted(_found(store, "tea")) == ["Takes tea for an illness.", "Takes tea with lemon."]
    assert _found(store, "tea", shared) == ["Takes tea with lemon."]
    assert len(_found(store, "tea")) == 2  # and the private pool is still the private one


def test_issue10_another_process_writing_or_rebuilding_the_journal_is_seen(
    store: Store, store_path: Path
) -> None:
    session = PersonSession(store, ANA, ANA)
    ensure_person(store, ANA)
    add_note(session, "Has a sister called Rita.", Kind.FACT, Scope.DIRECT)
    assert _found(store, "sister") == ["Has a sister called Rita."]
    head = journal_head(store)

    other = Store.open(str(store_path), passphrase=PASSPHRASE)  # as another process would
    try:
        # Erase Ana there and build a new journal of the same length: the held head's seq
        # comes back, but not its hash, so the held pool (with Rita) must not.
        erase_person(PersonSession(other, ANA, "staff:x"), "ana")
        ensure_person(other, ANA)
        again = PersonSession(other, ANA, ANA)
        while journal_head(other)[0] < head[0]:
            add_note(again, "Has a sister called Eva.", Kind.FACT, Scope.DIRECT)
        assert journal_head(other)[0] == head[0]
    finally:
        other.close()
    assert "Has a sister called Rita." not in _found(store, "sister")


def test_issue10_C3_the_pool_is_dropped_on_close_and_erasure(store: Store) -> None:
    session = PersonSession(store, ANA, ANA)
    ensure_person(store, ANA)
    add_note(session, "Likes green tea.", Kind.PREFERENCE, Scope.DIRECT)
    _found(store, "tea")
    assert "search_pools" in store.plaintext_caches
    erase_person(PersonSession(store, ANA, "staff:x"), "ana")
    assert "search_pools" not in store.plaintext_caches
    ensure_person(store, ANA)
    add_note(session, "Likes green tea.", Kind.PREFERENCE, Scope.DIRECT)
    _found(store, "tea")
    store.close()
    assert store.plaintext_caches == {}


def journal_head(store: Store) -> tuple[int, bytes]:
    with store.read() as conn:
        head = journal.head(conn, ANA)
    assert head is not None
    return head
