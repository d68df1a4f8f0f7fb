"""Issue 19 item 2: verify streams each chain, so its peak memory does not grow with the
length of a journal or a conversation log — only with what the fold's replay must hold
(the notes it rebuilds), which it compares with the stored projection.

Peaks are tracemalloc's (Python allocations), at N and 10N entries, in this process.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from engram.model.conversation import EntryKind
from engram.model.ids import ConversationId, PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import start_conversation
from engram.runtime.note_writes import NoteDraft, note_added
from engram.store import conversation_log, crypto, journal, projection_memory
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE

PERSON = PersonId("pat")
TEXT = "a turn of about a hundred characters, the length people type when they ask for help. "


def _peak(run: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _store(path: Path) -> tuple[Store, ConversationId]:
    store = Store.create(
        str(path), passphrase=PASSPHRASE, use_keyring=False, kdf=crypto.FAST_KDF_FOR_TESTS
    )
    return store, start_conversation(store, [PERSON]).id


def _turns(store: Store, conversation: ConversationId, count: int) -> None:
    for start in range(0, count, 1_000):
        with store.write() as txn:
            for n in range(start, min(count, start + 1_000)):
                conversation_log.append_entry(
                    store,
                    txn,
                    conversation,
                    EntryKind.USER,
                    ref=f"t_{n}",
                    author=PERSON,
                    status="committed",
                    text=TEXT + str(n),
                )


def _verified_peak(store: Store) -> int:
    verify(store)  # caches warm (pseudonyms, alembic's scripts), as in a second run
    found: list[bool] = []
    peak = _peak(lambda: found.append(verify(store).ok))
    assert found == [True]
    return peak


def test_issue19_item2_verify_peak_is_flat_in_a_conversation_logs_length(tmp_path: Path) -> None:
    peaks = []
    for count in (400, 4_000):
        store, conversation = _store(tmp_path / f"log{count}.engram")
        try:
            _turns(store, conversation, count)
            peaks.append(_verified_peak(store))
        finally:
            store.close()
    print(f"verify peak: {peaks[0] / 1e6:.2f} MB at 400 turns, {peaks[1] / 1e6:.2f} MB at 4,000")
    assert peaks[1] <= 1.5 * peaks[0], peaks


def _notes(store: Store, count: int) -> None:
    for start in range(0, count, 1_000):
        with store.write() as txn:
            journal.append(
                store,
                txn,
                PERSON,
                [
                    note_added(NoteDraft(f"note {n}", Kind.FACT, Scope.DIRECT), "t", None, None)
                    for n in range(start, min(count, start + 1_000))
                ],
            )


def _notes_held(store: Store, count: int) -> int:
    """The peak of holding the person's notes as the replay rebuilds them."""

    def held() -> None:
        with store.read() as conn:
            assert projection_memory.unscoped_memory(conn, PERSON).note_count() == count

    return _peak(held)


def test_issue19_item2_verify_holds_no_more_than_the_replayed_notes(tmp_path: Path) -> None:
    """A journal's own rows are never held: from N to 10N events, verify's peak grows by
    no more than the notes its replay rebuilds (it held the rows, events and payloads of
    the whole journal besides)."""
    peaks, notes = [], []
    for count in (300, 3_000):
        store, _ = _store(tmp_path / f"journal{count}.engram")
        try:
            _notes(store, count)
            peaks.append(_verified_peak(store))
            notes.append(_notes_held(store, count))
        finally:
            store.close()
        print(f"{count} events: verify {peaks[-1] / 1e6:.2f} MB, notes {notes[-1] / 1e6:.2f} MB")
    assert peaks[1] - peaks[0] <= 1.25 * (notes[1] - notes[0]), (peaks, notes)
