"""Issue 19 item 1: one signed head per chain per write, instead of a signature per entry.

Each test tampers with a store the way someone with the file but not the store key could
(the hash chain they can recompute; a signature they cannot make), and checks that verify
reports it; the migration test upgrades a store written the old way (a signature per entry).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, text

from engram.control.erase import erase_person
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import start_conversation
from engram.store import chain, crypto, faults, journal, migrate, signed_heads
from engram.store.journal import journal_header
from engram.store.pseudonyms import pseudonym
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE

ROOT = Path(__file__).resolve().parents[2]
ANA = PersonId("ana")


def _with_notes(store: Store, person: str = ANA, count: int = 3) -> None:
    with store.read() as conn:
        if not journal.person_exists(conn, PersonId(person)):
            start_conversation(store, [PersonId(person)])  # the person and a log
    session = PersonSession.open(store, person)
    for n in range(count):
        add_note(session, f"{person} note {n}", Kind.FACT, Scope.DIRECT)


def _head_row(path: Path, hidden: str) -> tuple[int, bytes, int, bytes] | None:
    with sqlite3.connect(path) as raw:
        row = raw.execute(
            "SELECT length, head, at, signature FROM chain_heads WHERE chain = ?", (hidden,)
        ).fetchone()
    return None if row is None else (int(row[0]), bytes(row[1]), int(row[2]), bytes(row[3]))


def _raw(path: Path, sql: str, *args: object) -> None:
    with sqlite3.connect(path) as raw:
        raw.execute(sql, args)


def _problems(store: Store) -> list[str]:
    report = verify(store)
    assert not report.ok
    return report.problems


def test_issue19_item1_a_write_signs_one_head_per_chain_and_no_entry(
    store: Store, store_path: Path
) -> None:
    _with_notes(store, count=4)
    hidden = store.hidden_name(chain.journal_chain(ANA))
    with sqlite3.connect(store_path) as raw:
        signatures = {bytes(s) for (s,) in raw.execute("SELECT signature FROM journal")}
        length = raw.execute("SELECT max(seq) FROM journal WHERE person='ana'").fetchone()[0]
        names = [c for (c,) in raw.execute("SELECT chain FROM chain_heads")]
    assert signatures == {chain.UNSIGNED}
    row = _head_row(store_path, hidden)
    assert row is not None and row[0] == length
    assert all("ana" not in name for name in names), "chains are named by keyed hash only"
    with store.read() as conn:
        assert signed_heads.holds(
            crypto.Verifier(store.info.verify_key),
            store.info.id,
            signed_heads.read_all(conn)[hidden],
        )
    assert verify(store).ok


def test_issue19_item1_a_forged_entry_inside_the_signed_range_is_caught(
    store: Store, store_path: Path
) -> None:
    _with_notes(store)
    _raw(store_path, "UPDATE journal SET body = body || ' ' WHERE person = 'ana' AND seq = 2")
    assert any(
        "journal:ana: entry 2: its contents do not match its hash" in p for p in _problems(store)
    )


def test_issue19_item1_a_rehashed_forgery_is_caught_by_the_signed_head(
    store: Store, store_path: Path
) -> None:
    """Rewriting an entry and recomputing every hash after it (which needs no key) leaves
    a chain that links, but whose head is not the signed one."""
    _with_notes(store)
    with sqlite3.connect(store_path) as raw:
        rows = raw.execute(
            "SELECT seq, at, actor, type, cause_conversation, cause_turn, body, key_ref, "
            "payload_hash, prev_hash FROM journal WHERE person='ana' ORDER BY seq"
        ).fetchall()
        prev = bytes(rows[0][9])
        for seq, at, actor, type_, conv, turn, body, key_ref, p_hash, _ in rows:
            if seq == 2:
                actor = "mallory"  # who did it, rewritten
            header = journal_header(
                ANA, seq, at, pseudonym(store, actor), type_, conv, turn, body, key_ref
            )
            entry = chain.entry_hash(prev, header, bytes(p_hash) if p_hash else None)
            raw.execute(
                "UPDATE journal SET actor=?, prev_hash=?, entry_hash=? "
                "WHERE person='ana' AND seq=?",
                (actor, prev, entry, seq),
            )
            prev = entry
    problems = _problems(store)
    assert any("journal:ana: entry" in p and "differs from its signed head" in p for p in problems)


def _forge_tail(store: Store, store_path: Path) -> None:
    """Append one entry that links and hashes correctly, with no signed head over it."""
    with sqlite3.connect(store_path) as raw:
        seq, at, type_, conv, turn, body, entry = raw.execute(
            "SELECT seq, at, type, cause_conversation, cause_turn, body, entry_hash FROM journal "
            "WHERE person='ana' ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        header = journal_header(
            ANA, seq + 1, at, pseudonym(store, "mallory"), type_, conv, turn, body, None
        )
        forged = chain.entry_hash(bytes(entry), header, None)
        raw.execute(
            "INSERT INTO journal (person, seq, at, actor, type, cause_conversation, cause_turn, "
            "body, key_ref, payload_hash, prev_hash, entry_hash, signature) "
            "VALUES ('ana', ?, ?, 'mallory', ?, ?, ?, ?, NULL, NULL, ?, ?, ?)",
            (seq + 1, at, type_, conv, turn, body, bytes(entry), forged, chain.UNSIGNED),
        )


def test_issue19_item1_an_unsigned_tail_is_caught(store: Store, store_path: Path) -> None:
    _with_notes(store)
    _forge_tail(store, store_path)
    problems = _problems(store)
    assert any("journal:ana: entry after entry" in p and "not covered" in p for p in problems)


def test_issue19_item1_an_older_signed_head_put_back_leaves_an_uncovered_tail(
    store: Store, store_path: Path
) -> None:
    hidden = store.hidden_name(chain.journal_chain(ANA))
    _with_notes(store, count=2)
    older = _head_row(store_path, hidden)
    assert older is not None
    _with_notes(store, count=1)
    _raw(
        store_path,
        "UPDATE chain_heads SET length=?, head=?, at=?, signature=? WHERE chain=?",
        *older,
        hidden,
    )
    assert any(
        "journal:ana:" in p and "not covered by its signed head" in p for p in _problems(store)
    )


def test_issue19_item1_a_deleted_head_row_is_caught(store: Store, store_path: Path) -> None:
    _with_notes(store)
    _raw(
        store_path,
        "DELETE FROM chain_heads WHERE chain = ?",
        store.hidden_name(chain.journal_chain(ANA)),
    )
    assert any("journal:ana: its signed head is missing" in p for p in _problems(store))


@pytest.mark.parametrize("column", ["length", "at", "head"])
def test_issue19_item1_an_altered_head_row_is_caught(
    store: Store, store_path: Path, column: str
) -> None:
    _with_notes(store)
    hidden = store.hidden_name(chain.journal_chain(ANA))
    change = {"length": "length - 1", "at": "at + 1", "head": "zeroblob(32)"}[column]
    _raw(store_path, f"UPDATE chain_heads SET {column} = {change} WHERE chain = ?", hidden)
    assert any(
        "journal:ana: its signed head does not carry this store's signature" in p
        for p in _problems(store)
    )


def test_issue19_item1_a_head_signed_by_a_foreign_key_is_caught(
    store: Store, store_path: Path
) -> None:
    """Someone with a key of their own signs the head of a chain they rewrote."""
    _with_notes(store)
    _forge_tail(store, store_path)
    hidden = store.hidden_name(chain.journal_chain(ANA))
    with sqlite3.connect(store_path) as raw:
        length, head = raw.execute(
            "SELECT seq, entry_hash FROM journal WHERE person='ana' ORDER BY seq DESC LIMIT 1"
        ).fetchone()
    foreign = signed_heads.sign(store.info.id, crypto.Signer.generate(), hidden, length, head, 7)
    _raw(
        store_path,
        "UPDATE chain_heads SET length=?, head=?, at=?, signature=? WHERE chain=?",
        foreign.length,
        foreign.head,
        foreign.at,
        foreign.signature,
        hidden,
    )
    assert any("does not carry this store's signature" in p for p in _problems(store))


def test_issue19_item1_entries_cut_before_the_signed_length_are_caught(
    store: Store, store_path: Path
) -> None:
    _with_notes(store)
    with sqlite3.connect(store_path) as raw:
        last = raw.execute("SELECT max(seq) FROM journal WHERE person='ana'").fetchone()[0]
        raw.execute("DELETE FROM journal_payloads WHERE person='ana' AND seq=?", (last,))
        raw.execute("DELETE FROM journal WHERE person='ana' AND seq=?", (last,))
    problems = _problems(store)
    assert any(
        f"journal:ana: the store holds {last - 1} entries but its signed head covers {last}" in p
        for p in problems
    )


def test_issue19_item1_a_signed_head_left_of_an_erased_chain_is_caught(
    store: Store, store_path: Path
) -> None:
    """Erasing a person removes their chain's signed head in the same write; one put back
    (from a copy) names a chain with no entries."""
    _with_notes(store, "ana")
    _with_notes(store, "ben")
    hidden = store.hidden_name(chain.journal_chain(ANA))
    kept = _head_row(store_path, hidden)
    assert kept is not None
    erase_person(PersonSession.open(store, ANA), ANA)
    assert _head_row(store_path, hidden) is None
    assert verify(store).ok
    _raw(
        store_path,
        "INSERT INTO chain_heads (chain, length, head, at, signature) VALUES (?, ?, ?, ?, ?)",
        hidden,
        *kept,
    )
    assert any(
        p.startswith("chain_heads: a signed head for chains that hold no entries")
        for p in _problems(store)
    )


def test_issue19_item1_a_store_signed_per_entry_is_upgraded_and_still_checked(
    tmp_path: Path,
) -> None:
    """A store as Engram wrote it before signed heads (revision 0007, every entry signed
    on its own) opens, has every head signed by the upgrade, and verifies; its per-entry
    signatures are still checked."""
    path = tmp_path / "old.engram"
    store = Store.create(
        str(path), passphrase=PASSPHRASE, use_keyring=False, kdf=crypto.FAST_KDF_FOR_TESTS
    )
    _with_notes(store, "ana")
    _with_notes(store, "ben")
    signer = store.signer
    store.close()
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        command.downgrade(migrate._config(connection), "0007")
        # What the old code wrote: each entry's hash signed with the store key.
        for table in ("journal", "conversation_log", "erasures", "ledger"):
            for rowid, entry in connection.execute(
                text(f"SELECT rowid, entry_hash FROM {table}")
            ).all():
                connection.execute(
                    text(f"UPDATE {table} SET signature = :s WHERE rowid = :r"),
                    {"s": signer.sign(bytes(entry)), "r": rowid},
                )
    engine.dispose()
    with sqlite3.connect(path) as raw:
        assert raw.execute(
            "SELECT count(*) FROM sqlite_master WHERE name='chain_heads'"
        ).fetchone() == (0,)
    store = Store.open(str(path), passphrase=PASSPHRASE)
    try:
        with store.read() as conn:
            assert migrate.current_revision(conn) == migrate.head_revision()
            assert len(signed_heads.read_all(conn)) >= 4  # ana, ben, their logs, the ledger
        report = verify(store)
        assert report.ok, report.problems
        _with_notes(store, "ana", 1)  # a new entry after old ones: no signature of its own
        assert verify(store).ok
    finally:
        store.close()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE journal SET signature = zeroblob(64) WHERE person='ben' AND seq = 2")
    store = Store.open(str(path), passphrase=PASSPHRASE)
    try:
        problems = verify(store).problems
        assert any("journal:ben: entry 2: its signature does not match" in p for p in problems)
    finally:
        store.close()


def test_issue19_item1_revision_0008_refuses_to_sign_without_the_store_key(
    tmp_path: Path,
) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    with engine.begin() as connection:
        command.upgrade(migrate._config(connection), "0007")
        connection.execute(
            text(
                "INSERT INTO erasures (seq, at, actor, body, prev_hash, entry_hash, signature) "
                "VALUES (1, 1, 'x', '{}', x'00', x'00', x'00')"
            )
        )
        with pytest.raises(RuntimeError, match="needs the unlocked store"):
            migrate.upgrade(connection)


CRASHING_WRITE = """
import sys
from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.scope import Kind, Scope
from engram.store.store import Store
store = Store.open(sys.argv[1], passphrase=sys.argv[2])
add_note(PersonSession.open(store, "ana"), "never committed", Kind.FACT, Scope.DIRECT)
print("the write returned")
"""


def test_issue19_item1_a_kill_between_the_appends_and_their_signed_heads_leaves_neither(
    store: Store, store_path: Path
) -> None:
    """SIGKILL with the entries appended but their heads not yet signed: both are in one
    transaction, so the store opens with neither, and verifies clean."""
    _with_notes(store, count=2)
    with sqlite3.connect(store_path) as raw:
        before = raw.execute("SELECT count(*) FROM journal").fetchone()[0]
    store.close()
    env = {**os.environ, faults.CRASH_ENV: faults.APPENDED, "PYTHONPATH": f"{ROOT / 'app'}:{ROOT}"}
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_WRITE, str(store_path), PASSPHRASE],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert "the write returned" not in done.stdout
    reopened = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        with reopened.read() as conn:
            assert conn.execute(text("SELECT count(*) FROM journal")).scalar() == before
        report = verify(reopened)
        assert report.ok, report.problems
    finally:
        reopened.close()
