"""Tamper evidence: verify catches any flipped byte, a deleted row, a rollback."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engram.control.demo import build_demo
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.scope import Kind, Scope
from engram.store import crypto
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE

CHAINED = {
    "journal": [
        "seq",
        "at",
        "actor",
        "type",
        "cause_conversation",
        "cause_turn",
        "body",
        "key_ref",
        "payload_hash",
        "prev_hash",
        "entry_hash",
        "signature",
    ],
    "journal_payloads": ["sealed"],
    "conversation_log": [
        "seq",
        "at",
        "entry",
        "ref",
        "author",
        "status",
        "body",
        "payload_hash",
        "prev_hash",
        "entry_hash",
        "signature",
    ],
    "log_payloads": ["sealed"],
    "erasures": ["at", "actor", "body", "prev_hash", "entry_hash", "signature"],
    # Issue 19 item 1: the signed head of each chain, one signature per write.
    "chain_heads": ["chain", "length", "head", "at", "signature"],
    "data_keys": ["wrapped"],
    "note_state": ["data", "status", "scope", "confidence_bp"],
    "note_counts": ["n", "status"],
    "conversations": ["surface", "incognito"],
    "conversation_participants": ["person"],
}


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Store]]:
    path = tmp_path_factory.mktemp("integrity") / "demo.engram"
    build_demo(str(path), passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    store = Store.open(str(path), passphrase=PASSPHRASE)
    yield path, store
    store.close()


def _mutate(value: Any, position: int) -> Any:
    if value is None:
        return "tampered"
    if isinstance(value, bytes):
        if not value:  # an entry under a signed head has no signature of its own: give it one
            return bytes([position % 256]) * 64
        data = bytearray(value)
        data[position % len(data)] ^= 1 << (position % 8)
        return bytes(data)
    if isinstance(value, int):
        return value + 1 + position % 3
    text = str(value)
    index = position % len(text)
    replacement = "Y" if text[index] != "Y" else "Z"
    return text[:index] + replacement + text[index + 1 :]


def test_demo_store_verifies_clean(demo_store: tuple[Path, Store]) -> None:
    report = verify(demo_store[1])
    assert report.ok, report.problems
    assert report.chains > 5 and not report.warnings


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_flipped_byte_of_ciphertext_signature_or_header_is_caught(
    demo_store: tuple[Path, Store], data: st.DataObject
) -> None:
    path, store = demo_store
    table = data.draw(st.sampled_from(sorted(CHAINED)))
    column = data.draw(st.sampled_from(CHAINED[table]))
    raw = sqlite3.connect(path)
    try:
        rowids = [r[0] for r in raw.execute(f"select rowid from {table}")]
        assume(rowids)
        rowid = data.draw(st.sampled_from(rowids))
        original = raw.execute(f"select {column} from {table} where rowid=?", (rowid,)).fetchone()[
            0
        ]
        tampered = _mutate(original, data.draw(st.integers(0, 10_000)))
        if column == "incognito":
            tampered = 0 if original else 1  # a boolean has only one other value
        try:
            with raw:
                raw.execute(f"update {table} set {column}=? where rowid=?", (tampered, rowid))
        except sqlite3.IntegrityError:
            assume(False)
        try:
            report = verify(store)
            assert not report.ok, f"{table}.{column} row {rowid} changed unnoticed"
        finally:
            with raw:
                raw.execute(f"update {table} set {column}=? where rowid=?", (original, rowid))
    finally:
        raw.close()
    assert verify(store).ok


def test_deleting_a_middle_journal_row_is_caught(
    demo_store: tuple[Path, Store], tmp_path: Path
) -> None:
    path, _ = demo_store
    copy = tmp_path / "copy.engram"
    _backup(path, copy)
    with sqlite3.connect(copy) as raw:
        raw.execute("delete from journal where person='maya' and seq=4")
    reopened = Store.open(str(copy), passphrase=PASSPHRASE)
    report = verify(reopened)
    reopened.close()
    assert any("journal:maya: entry 4 is missing" in p for p in report.problems)


def test_putting_back_an_older_copy_is_detected(
    store: Store, store_path: Path, tmp_path: Path
) -> None:
    from engram.model.ids import PersonId
    from engram.runtime.conversations import start_conversation

    start_conversation(store, [PersonId("ana")])
    session = PersonSession.open(store, "ana")
    add_note(session, "first", Kind.FACT, Scope.DIRECT)
    old = tmp_path / "old.engram"
    _backup(store_path, old)
    add_note(session, "second", Kind.FACT, Scope.DIRECT)
    assert verify(store).ok
    store.close()
    shutil.copy(old, store_path)  # the checkpoint beside it stays current
    for leftover in (store_path.with_name(store_path.name + s) for s in ("-wal", "-shm")):
        leftover.unlink(missing_ok=True)
    rolled_back = Store.open(str(store_path), passphrase=PASSPHRASE)
    report = verify(rolled_back)
    rolled_back.close()
    assert not report.ok
    assert any("older copy" in p for p in report.problems)


def test_issue9_item7_a_missing_checkpoint_fails_verify_in_one_sentence(store: Store) -> None:
    """Every store wrote a checkpoint when it was created: finding none is a problem."""
    store.checkpoint.path.unlink()
    report = verify(store)
    assert not report.ok
    [problem] = report.problems
    assert "there is none" in problem and "engram checkpoint reanchor" in problem
    assert problem.count(";") == 1


def test_forged_checkpoint_is_caught(store: Store) -> None:
    text = store.checkpoint.path.read_text()
    signature = text.split('"signature":"')[1][:128]
    forged = format(int(signature, 16) ^ 1, "0128x")  # another signature, as well formed
    store.checkpoint.path.write_text(text.replace(signature, forged))
    assert not verify(store).ok


def _backup(source: Path, target: Path) -> None:
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    checkpoint = source.with_name(source.name + ".checkpoint")
    if checkpoint.exists():
        shutil.copy(checkpoint, target.with_name(target.name + ".checkpoint"))


def test_a_damaged_checkpoint_is_never_papered_over_by_a_write(store: Store) -> None:
    from engram.model.ids import PersonId
    from engram.runtime.conversations import start_conversation

    start_conversation(store, [PersonId("ana")])
    store.checkpoint.path.write_text("{ cut short")
    assert not verify(store).ok
    start_conversation(store, [PersonId("ben")])  # a write after the damage
    report = verify(store)
    assert not report.ok and any("set aside" in p for p in report.problems)


def test_a_deleted_key_row_is_caught(store: Store, store_path: Path) -> None:
    from engram.model.ids import PersonId
    from engram.runtime.conversations import start_conversation

    start_conversation(store, [PersonId("ana")])
    session = PersonSession.open(store, "ana")
    add_note(session, "kept under ana's key", Kind.FACT, Scope.DIRECT)
    store.close()
    with sqlite3.connect(store_path) as raw:
        raw.execute("delete from data_keys where key_ref='person:ana'")
    reopened = Store.open(str(store_path), passphrase=PASSPHRASE)
    report = verify(reopened)
    reopened.close()
    assert any("person:ana: it is missing" in p for p in report.problems)
