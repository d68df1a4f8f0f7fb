"""Verifiable erasure: destroy keys, delete rows, record a content-free erasure, scan files.

With SQLite, `secure_delete` (set on every connection) zeroes deleted content and the WAL
checkpoint after the transaction moves those zeroed pages into the file and truncates the
WAL, so `scan_files` can prove the erased ciphertext is gone from the bytes on disk.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, delete, insert, select

from engram.model.ids import ConversationId, PersonId
from engram.model.progress import Progress
from engram.store import chain, crypto, projection, schema
from engram.store.dialect import lock_chain, sqlite_path
from engram.store.store import Store, WriteTxn, conversation_key_ref, person_key_ref

SCAN_WINDOW = 24  # bytes of each ciphertext looked for; random bytes never collide by chance


@dataclass
class Shredded:
    """What an erasure removed, and the ciphertexts to look for afterwards."""

    keys_destroyed: list[str] = field(default_factory=list)
    rows_deleted: dict[str, int] = field(default_factory=dict)
    needles: list[bytes] = field(default_factory=list)

    def count(self, table: str, rows: int) -> None:
        """Add to a table's deleted-row count."""
        self.rows_deleted[table] = self.rows_deleted.get(table, 0) + rows

    def merge(self, other: Shredded) -> None:
        """Fold another shredding's tally into this one."""
        self.keys_destroyed.extend(other.keys_destroyed)
        for table, rows in other.rows_deleted.items():
            self.count(table, rows)
        self.needles.extend(other.needles)


def _capture(conn: Connection, column: Any, *where: Any) -> list[bytes]:
    return [bytes(blob) for blob in conn.execute(select(column).where(*where)).scalars()]


def shred_note_payloads(
    conn: Connection, person: PersonId, conversation: ConversationId
) -> tuple[list[int], Shredded]:
    """Delete the payloads of text a person's journal learned in a conversation."""
    J, JP = schema.journal, schema.journal_payloads
    ref = f"note:{person}:{conversation}"
    seqs = [
        int(s)
        for s in conn.execute(
            select(J.c.seq).where(J.c.person == person, J.c.key_ref == ref)
        ).scalars()
    ]
    out = Shredded()
    if seqs:
        where = (JP.c.person == person, JP.c.seq.in_(seqs))
        out.needles = _capture(conn, JP.c.sealed, *where)
        out.count("journal_payloads", conn.execute(delete(JP).where(*where)).rowcount)
    return seqs, out


def shred_conversation(store: Store, txn: WriteTxn, conversation: ConversationId) -> Shredded:
    """Delete a conversation's log, payloads, participants and key (the chain goes too)."""
    conn = txn.conn
    out = Shredded()
    LP, L = schema.log_payloads, schema.conversation_log
    out.needles = _capture(conn, LP.c.sealed, LP.c.conversation == conversation)
    for table in (LP, L, schema.conversation_participants):
        out.count(
            table.name,
            conn.execute(delete(table).where(table.c.conversation == conversation)).rowcount,
        )
    out.count(
        "conversations",
        conn.execute(
            delete(schema.conversations).where(schema.conversations.c.id == conversation)
        ).rowcount,
    )
    if store.destroy_key(conn, conversation_key_ref(conversation)):
        out.keys_destroyed.append(conversation_key_ref(conversation))
    chain_id = chain.log_chain(conversation)
    txn.gone[chain_id] = store.hidden_name(chain_id)
    txn.erased = True
    return out


def erase_person_rows(store: Store, txn: WriteTxn, person: PersonId) -> Shredded:
    """Delete a person's journal, payloads, projection, name and key."""
    conn = txn.conn
    out = Shredded()
    JP, J = schema.journal_payloads, schema.journal
    out.needles = _capture(conn, JP.c.sealed, JP.c.person == person)
    name = conn.execute(
        select(schema.persons.c.sealed_name).where(schema.persons.c.id == person)
    ).scalar()
    if name:
        out.needles.append(bytes(name))
    out.count("journal_payloads", conn.execute(delete(JP).where(JP.c.person == person)).rowcount)
    out.count("journal", conn.execute(delete(J).where(J.c.person == person)).rowcount)
    out.count("projection", projection.delete_person(conn, person))
    out.count(
        "persons",
        conn.execute(delete(schema.persons).where(schema.persons.c.id == person)).rowcount,
    )
    store.touched(schema.persons, person)  # the signed ledger records the removal
    # Keys of text learned in conversations are derived from the person key: it goes, so do they.
    if store.destroy_key(conn, person_key_ref(person)):
        out.keys_destroyed.append(person_key_ref(person))
    chain_id = chain.journal_chain(person)
    txn.gone[chain_id] = store.hidden_name(chain_id)
    txn.erased = True
    return out


def record_erasure(store: Store, txn: WriteTxn, actor: str, body: dict[str, Any]) -> int:
    """Append a content-free record to the store's signed erasure chain."""
    E = schema.erasures
    conn = txn.conn
    lock_chain(conn, chain.ERASURE_CHAIN)
    start = chain.head(conn, E, store.info.id, chain.ERASURE_CHAIN)
    seq, prev = start.seq + 1, start.prev
    at = max(store.now_micros(), start.at)
    body_text = crypto.canonical_json(body)
    entry = chain.entry_hash(prev, erasure_header(seq, at, actor, body_text), None)
    conn.execute(
        insert(E).values(
            seq=seq,
            at=at,
            actor=actor,
            body=body_text,
            prev_hash=prev,
            entry_hash=entry,
            signature=store.signer.sign(entry),
        )
    )
    txn.heads[chain.ERASURE_CHAIN] = (seq, entry)
    return seq


def erasure_header(seq: int, at: int, actor: str, body: str) -> bytes:
    """The chained header of an erasure record."""
    return chain.header([seq, at, actor, body])


def erasure_records(conn: Connection) -> list[dict[str, Any]]:
    """All erasure records (content-free), oldest first."""
    E = schema.erasures
    return [
        {"seq": r.seq, "at": r.at, "actor": r.actor, **json.loads(r.body)}
        for r in conn.execute(select(E).order_by(E.c.seq))
    ]


def scan_files(
    store: Store, needles: Iterable[bytes], progress: Progress | None = None
) -> dict[str, Any]:
    """Look for erased ciphertext in the database file, its WAL and its shared memory.
    `progress` counts probes looked for, file by file (each is a pass over the file)."""
    path = sqlite_path(store.url)
    if path is None:
        return {"scanned": [], "found": 0, "note": "not a file store; keys were destroyed"}
    probes = {bytes(n[-SCAN_WINDOW:]) for n in needles if len(n) >= SCAN_WINDOW}
    files = [path.with_name(path.name + suffix) for suffix in ("", "-wal", "-shm")]
    files = [candidate for candidate in files if candidate.exists()]
    scanned: list[str] = []
    found = done = 0
    for candidate in files:
        data = candidate.read_bytes()
        scanned.append(candidate.name)
        for probe in probes:
            found += probe in data
            done += 1
            if progress:
                progress(done, len(files) * len(probes))
    return {"scanned": scanned, "looked_for": len(probes), "found": found}


def excise_author(
    store: Store, txn: WriteTxn, conversation: ConversationId, author: str, actor: str
) -> tuple[int, Shredded]:
    """Take an erased person out of a shared conversation: their turns' payloads go and they
    stop being a reader; one signed log entry records both, so the chain still verifies."""
    from engram.model.conversation import EntryKind
    from engram.store.conversation_log import append_entry

    conn = txn.conn
    L, LP = schema.conversation_log, schema.log_payloads
    seqs = [
        int(s)
        for s in conn.execute(
            # only payloads still there: one already excised keeps its first excision
            select(L.c.seq)
            .join(LP, (LP.c.conversation == L.c.conversation) & (LP.c.seq == L.c.seq))
            .where(L.c.conversation == conversation, L.c.author == author)
        ).scalars()
    ]
    out = Shredded()
    if seqs:
        where = (LP.c.conversation == conversation, LP.c.seq.in_(seqs))
        out.needles = _capture(conn, LP.c.sealed, *where)
        out.count("log_payloads", conn.execute(delete(LP).where(*where)).rowcount)
    CP = schema.conversation_participants
    conn.execute(delete(CP).where(CP.c.conversation == conversation, CP.c.person == author))
    append_entry(
        store,
        txn,
        conversation,
        EntryKind.EXCISION,
        author=actor,
        body={"excised": seqs, "reason": "participant erased", "participant_removed": author},
    )
    txn.erased = True
    return len(seqs), out
