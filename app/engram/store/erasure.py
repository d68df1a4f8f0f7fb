"""Verifiable erasure: destroy keys, delete rows, record a content-free erasure, scan files.

With SQLite, `secure_delete` (set on every connection) zeroes deleted cells, but not the
stale copies a page keeps of cells that moved to another page when the b-tree rebalanced;
so finishing an erasure rewrites every page (VACUUM), checkpoints and truncates the WAL,
and `pending_erasure.scan_files` then proves no fragment of erased ciphertext is left in
the bytes on disk. Until that has happened a pending-erasure mark stays in the store: every
write that erases leaves one (`erasure_marks.erasing`).

Rows that must outlive an erased person (others' journals, shared conversation logs, the
erasure chain) name them afterwards only by a keyed pseudonym (`pseudonyms`).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from engram.engine.fold import apply_event
from engram.model.conversation import EntryKind
from engram.model.ids import ConversationId, PersonId
from engram.store import chain, crypto, projection, pseudonyms, schema
from engram.store.conversation_log import append_entry, log_header
from engram.store.data_keys import conversation_key_ref, note_key_ref, person_key_ref
from engram.store.dialect import lock_chain
from engram.store.erasure_admin import pseudonymize_admin
from engram.store.erasure_marks import erasing
from engram.store.journal import events, journal_header
from engram.store.store import Store, WriteTxn


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


def _wrapped_key(conn: Connection, key_ref: str) -> list[bytes]:
    return _capture(conn, schema.data_keys.c.wrapped, schema.data_keys.c.key_ref == key_ref)


def shred_note_payloads(
    store: Store, txn: WriteTxn, person: PersonId, conversation: ConversationId
) -> tuple[list[int], Shredded]:
    """Delete the payloads of text a person's journal learned in a conversation."""
    conn = txn.conn
    J, JP = schema.journal, schema.journal_payloads
    ref = note_key_ref(person, conversation)
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
    erasing(store, txn, out.needles)
    return seqs, out


def shred_journal_payloads(
    store: Store, txn: WriteTxn, person: PersonId, seqs: Collection[int]
) -> Shredded:
    """Delete the payloads of some of a person's journal entries (a note forgotten, issue 21
    item 7): the chain keeps their hashes, the event that names them explains the gap."""
    JP = schema.journal_payloads
    out = Shredded()
    wanted = sorted(set(seqs))
    for start in range(0, len(wanted), 500):
        where = (JP.c.person == person, JP.c.seq.in_(wanted[start : start + 500]))
        out.needles += _capture(txn.conn, JP.c.sealed, *where)
        out.count("journal_payloads", txn.conn.execute(delete(JP).where(*where)).rowcount)
    erasing(store, txn, out.needles)
    return out


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
    out.needles += _wrapped_key(conn, conversation_key_ref(conversation))
    if store.keys.destroy_key(conn, conversation_key_ref(conversation)):
        out.keys_destroyed.append(conversation_key_ref(conversation))
    chain_id = chain.log_chain(conversation)
    txn.gone[chain_id] = store.hidden_name(chain_id)
    erasing(store, txn, out.needles)
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
    out.needles += _wrapped_key(conn, person_key_ref(person))
    if store.keys.destroy_key(conn, person_key_ref(person)):
        out.keys_destroyed.append(person_key_ref(person))
    chain_id = chain.journal_chain(person)
    txn.gone[chain_id] = store.hidden_name(chain_id)
    erasing(store, txn, out.needles)
    return out


def record_erasure(store: Store, txn: WriteTxn, actor: str, body: dict[str, Any]) -> int:
    """Append a content-free record to the store's signed erasure chain. It names, by keyed
    hash, every chain the transaction removed, so a checkpoint that missed the erasure (a
    crash before it was rewritten) is advanced instead of taken for a rollback."""
    E = schema.erasures
    conn = txn.conn
    lock_chain(conn, chain.ERASURE_CHAIN)
    start = chain.head(conn, E, store.info.id, chain.ERASURE_CHAIN)
    seq, prev = start.seq + 1, start.prev
    at = max(store.now_micros(), start.at)
    body_text = crypto.canonical_json({**body, "chains": sorted(set(txn.gone.values()))})
    header = erasure_header(seq, at, pseudonyms.pseudonym(store, actor), body_text)
    entry = chain.entry_hash(prev, header, None)
    conn.execute(
        insert(E).values(
            seq=seq,
            at=at,
            actor=actor,
            body=body_text,
            prev_hash=prev,
            entry_hash=entry,
            signature=chain.UNSIGNED,
        )
    )
    txn.heads[chain.ERASURE_CHAIN] = (seq, entry)
    return seq


def erasure_header(seq: int, at: int, actor: str, body: str) -> bytes:
    """The chained header of an erasure record."""
    return chain.header([seq, at, actor, body])


def row_header(store: Store, r: Any) -> bytes:
    """The chained header of a stored erasure record (actor by pseudonym, or in clear for
    records written before pseudonyms)."""

    def header(actor: str | None) -> bytes:
        return erasure_header(r.seq, r.at, str(actor), r.body)

    def matches(head: bytes) -> bool:
        return chain.entry_hash(bytes(r.prev_hash), head, None) == bytes(r.entry_hash)

    return pseudonyms.header_of_row(store, r.actor, header, matches)


def erasure_records(conn: Connection) -> list[dict[str, Any]]:
    """All erasure records (content-free), oldest first."""
    E = schema.erasures
    return [
        {"seq": r.seq, "at": r.at, "actor": r.actor, **json.loads(r.body)}
        for r in conn.execute(select(E).order_by(E.c.seq))
    ]


def excise_author(
    store: Store,
    txn: WriteTxn,
    conversation: ConversationId,
    author: str,
    actor: str,
    reason: str = "participant erased",
) -> tuple[int, Shredded]:
    """Take a person out of a shared conversation (erased, or deleting it for themself,
    C4): their turns' payloads go and they stop being a reader; one signed log entry
    records both, so the chain still verifies."""
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
    erasing(store, txn, out.needles)
    CP = schema.conversation_participants
    conn.execute(delete(CP).where(CP.c.conversation == conversation, CP.c.person == author))
    append_entry(
        store,
        txn,
        conversation,
        EntryKind.EXCISION,
        author=actor,
        body={
            "excised": seqs,
            "reason": reason,
            "participant_removed": pseudonyms.pseudonym(store, author),
        },
    )
    return len(seqs), out


@dataclass
class Pseudonymized:
    """What pseudonymizing an erased person changed, and the rows it had to leave in clear."""

    renamed: int = 0
    # Table -> rows a release before pseudonyms signed with the clear id (they keep it).
    kept_clear: dict[str, int] = field(default_factory=dict)


def pseudonymize(store: Store, txn: WriteTxn, person: PersonId) -> Pseudonymized:
    """Replace an erased person's id with their pseudonym wherever a row must remain: as the
    actor in others' journals and in erasure records, as an author in conversation logs,
    and in the admin tables the ledger covers (`erasure_admin`). Chained headers commit to
    the pseudonym, so each chain still verifies; rows written before pseudonyms committed
    to the clear id and keep it (counted, never hidden)."""
    conn = txn.conn
    alias = pseudonyms.pseudonym(store, person)
    J, L, E = schema.journal, schema.conversation_log, schema.erasures
    counts = Pseudonymized()
    touched: set[PersonId] = set()
    for table, column, header, keys in (
        (J, J.c.actor, _journal_header_with, (J.c.person, J.c.seq)),
        (L, L.c.author, _log_header_with, (L.c.conversation, L.c.seq)),
        (E, E.c.actor, _erasure_header_with, (E.c.seq,)),
    ):
        for r in conn.execute(select(table).where(column == person)).all():
            payload = getattr(r, "payload_hash", None)
            fresh = chain.entry_hash(
                bytes(r.prev_hash), header(r, alias), payload and bytes(payload)
            ) == bytes(r.entry_hash)
            if not fresh:
                counts.kept_clear[table.name] = counts.kept_clear.get(table.name, 0) + 1
                continue
            where = [key == getattr(r, key.name) for key in keys]
            conn.execute(update(table).where(*where).values({column.name: alias}))
            counts.renamed += 1
            if table is J:
                touched.add(PersonId(r.person))
    for other in sorted(touched - {person}):
        _refold(conn, other)  # their notes' histories name the actor too
    counts.renamed += pseudonymize_admin(store, txn, person)
    return counts


def unexplained_pseudonyms(conn: Connection) -> list[str]:
    """Verify: a pseudonym in an actor or author column (`schema.ACTOR_COLUMNS`) must be the
    alias of someone an erasure record erased; anywhere else it would hide who did something."""
    aliases = set()
    for body in conn.execute(select(schema.erasures.c.body)).scalars():
        try:
            aliases.add(json.loads(body).get("alias"))
        except (ValueError, AttributeError):
            continue  # a damaged record: the chain walk reports it
    problems = []
    for column in schema.ACTOR_COLUMNS:
        used = conn.execute(
            select(column).where(column.startswith(pseudonyms.PREFIX)).distinct()
        ).scalars()
        problems += [
            f"{column.table.name}: a row names {name}, but no erasure record erased anyone by "
            "that name"
            for name in sorted(set(used) - aliases)
        ]
    return problems


def _journal_header_with(r: Any, actor: str) -> bytes:
    return journal_header(
        r.person, r.seq, r.at, actor, r.type, r.cause_conversation, r.cause_turn, r.body, r.key_ref
    )


def _log_header_with(r: Any, author: str) -> bytes:
    return log_header(r.conversation, r.seq, r.at, r.entry, r.ref, author, r.status, r.body)


def _erasure_header_with(r: Any, actor: str) -> bytes:
    return erasure_header(r.seq, r.at, actor, r.body)


def _refold(conn: Connection, person: PersonId) -> None:
    """Rebuild a person's projection from their journal (after their journal's actors were
    renamed, so the stored notes equal a replay again)."""
    history = list(events(conn, person))
    projection.delete_person(conn, person)
    target = projection.ProjectionTarget(conn, person)
    for event in history:
        apply_event(target, event)
    target.flush()
