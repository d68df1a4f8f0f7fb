"""C3 and verifiable erasure: after an erase, no plaintext and no captured ciphertext remain
in the database file, its WAL or its shared memory; the same scan finds them when the
erasure is skipped, so this test can fail."""

from __future__ import annotations

import secrets
import sqlite3
from pathlib import Path

import pytest

from engram.control.erase import erase_person
from engram.control.session import PersonSession
from engram.model.errors import NotAllowed, NotFound
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.note_writes import NoteDraft, add_digest_line, learn_note
from engram.store.store import Store
from engram.store.verify import verify

CANARY_PERSON = PersonId("canary")
OTHER = PersonId("other")


def _fill(store: Store) -> tuple[str, list[bytes]]:
    """A person whose every kind of data carries a canary; returns it and its ciphertexts."""
    canary = "CANARY-" + secrets.token_hex(8)
    own = start_conversation(store, [CANARY_PERSON])
    shared = start_conversation(store, [CANARY_PERSON, OTHER])
    turn = append_turn(store, own.id, role="user", author=CANARY_PERSON, text=f"I am {canary}")
    append_turn(store, shared.id, role="user", author=CANARY_PERSON, text=f"shared {canary}")
    append_turn(store, shared.id, role="user", author=OTHER, text="the other person's words")
    learn_note(
        store, CANARY_PERSON, NoteDraft(f"Name is {canary}", Kind.FACT, Scope.DIRECT), own.id, turn
    )
    learn_note(
        store,
        CANARY_PERSON,
        NoteDraft(f"Said {canary} here", Kind.FACT, Scope.PORTABLE),
        shared.id,
        None,
    )
    add_digest_line(store, CANARY_PERSON, own.id, f"Talked about {canary}")
    session = PersonSession.open(store, CANARY_PERSON)
    from engram.control.notes import add_note

    add_note(session, f"Own note {canary}", Kind.PREFERENCE, Scope.UNSPECIFIED)
    path = Path(store.url.removeprefix("sqlite:///"))
    with sqlite3.connect(path) as raw:
        captured = [
            bytes(r[0])
            for r in raw.execute("select sealed from journal_payloads where person='canary'")
        ]
        captured += [
            bytes(r[0])
            for r in raw.execute(
                "select sealed from log_payloads where conversation=? or "
                "(conversation=? and seq in "
                "(select seq from conversation_log where author='canary'))",
                (own.id, shared.id),
            )
        ]
        captured += [
            bytes(r[0])
            for r in raw.execute(
                "select wrapped from data_keys where key_ref like 'person:canary%' or key_ref=?",
                (f"conversation:{own.id}",),
            )
        ]
    assert len(captured) >= 7
    return canary, captured


def _raw_bytes(path: Path) -> bytes:
    return b"".join(
        p.read_bytes()
        for p in (path.with_name(path.name + s) for s in ("", "-wal", "-shm"))
        if p.exists()
    )


def _found(blob: bytes, canary: str, captured: list[bytes]) -> list[str]:
    hits = [f"plaintext {canary}"] if canary.encode() in blob else []
    hits += [f"ciphertext {c[:8].hex()}" for c in captured if c[-24:] in blob]
    return hits


def test_C3_erase_leaves_no_plaintext_or_ciphertext_in_db_wal_or_shm(
    store: Store, store_path: Path
) -> None:
    canary, captured = _fill(store)
    assert canary.encode() not in _raw_bytes(store_path)  # never stored in the clear at all
    report = erase_person(
        PersonSession.open(store, CANARY_PERSON, "staff:dana"), "canary"
    ).to_json()
    assert _found(_raw_bytes(store_path), canary, captured) == []
    assert report["raw_file_scan"]["found"] == 0 and report["raw_file_scan"]["looked_for"] >= 5
    assert "person:canary" in report["keys_destroyed"]
    assert report["conversations_deleted"] == 1 and report["turns_excised"] == 1
    assert report["wal_checkpoint"] == "complete"
    assert report["readable_remains"] is False
    # only a content-free record remains, and the store still verifies
    check = verify(store)
    assert check.ok, check.problems
    with sqlite3.connect(store_path) as raw:
        assert raw.execute("select count(*) from journal where person='canary'").fetchone()[0] == 0
        assert raw.execute("select count(*) from erasures").fetchone()[0] == 1
        body = raw.execute("select body from erasures").fetchone()[0]
    assert "canary" not in body
    with pytest.raises(NotFound):
        PersonSession.open(store, CANARY_PERSON)
    # the other participant's words survive the erase
    from engram.runtime.conversations import conversations_of, turns

    shared = conversations_of(store, OTHER)[0]
    assert [t for _, t in turns(store, shared.id)] == [None, "the other person's words"]


def test_C3_the_scan_finds_the_canary_when_erasure_is_skipped(
    store: Store, store_path: Path
) -> None:
    canary, captured = _fill(store)
    store.close()
    # No erase: the ciphertexts are all there to be found, so the test above can fail.
    hits = _found(_raw_bytes(store_path), canary, captured)
    assert len(hits) == len(captured)


def test_C3_deleting_rows_without_secure_delete_and_checkpoint_leaves_traces(
    store: Store, store_path: Path
) -> None:
    canary, captured = _fill(store)
    store.close()
    with sqlite3.connect(store_path) as raw:
        raw.execute("pragma secure_delete=OFF")
        raw.execute("delete from journal_payloads where person='canary'")
    assert _found(_raw_bytes(store_path), canary, captured)


def test_C3_erase_needs_the_typed_confirmation(store: Store) -> None:
    start_conversation(store, [CANARY_PERSON])
    session = PersonSession.open(store, CANARY_PERSON)
    with pytest.raises(NotAllowed, match="confirm by typing"):
        erase_person(session, "Canary")
    PersonSession.open(store, CANARY_PERSON)  # still there


def test_C3_a_person_recreated_after_erasure_verifies(store: Store) -> None:
    _fill(store)
    erase_person(PersonSession.open(store, CANARY_PERSON), "canary")
    again = start_conversation(store, [CANARY_PERSON])
    append_turn(store, again.id, role="user", author=CANARY_PERSON, text="hello again")
    report = verify(store)
    assert report.ok, report.problems


def test_C3_an_erased_person_gets_no_new_memory_through_a_shared_conversation(
    store: Store,
) -> None:
    _fill(store)
    shared = [c for c in conversations_of_other(store) if CANARY_PERSON in c.participants]
    assert shared
    erase_person(PersonSession.open(store, CANARY_PERSON), "canary")
    from engram.runtime.conversations import conversations_of

    conversation = conversations_of(store, OTHER)[0]
    assert CANARY_PERSON not in conversation.participants
    with pytest.raises((NotFound, NotAllowed)):
        learn_note(
            store, CANARY_PERSON, NoteDraft("ghost", Kind.FACT, Scope.DIRECT), conversation.id, None
        )
    with pytest.raises(NotAllowed):
        append_turn(store, conversation.id, role="user", author=CANARY_PERSON, text="ghost")
    assert verify(store).ok


def test_a_rolled_back_key_is_not_kept(store: Store) -> None:
    from engram.store.data_keys import person_key_ref

    with pytest.raises(RuntimeError), store.write() as txn:
        store.keys.data_key(txn.conn, person_key_ref("nobody"), create=True)
        raise RuntimeError("the transaction fails after the key was made")
    from engram.store.data_keys import KeyGone

    with pytest.raises(KeyGone), store.read() as conn:
        store.keys.data_key(conn, person_key_ref("nobody"))


def conversations_of_other(store: Store) -> list:  # type: ignore[type-arg]
    from engram.runtime.conversations import conversations_of

    return conversations_of(store, OTHER)
