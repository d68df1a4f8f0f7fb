"""Conversation logs: one signed, hash-chained, sealed log per conversation."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, and_, bindparam, func, insert, or_, select

from engram.model.clock import from_micros, to_micros
from engram.model.conversation import ConversationInfo, EntryKind, LogEntry, Surface
from engram.model.errors import damaged
from engram.model.ids import ConversationId, PersonId, new_conversation_id
from engram.store import chain, contexts, crypto, pseudonyms, schema, store_time
from engram.store.crypto import SealBroken
from engram.store.data_keys import KeyGone, conversation_key_ref
from engram.store.dialect import lock_chain
from engram.store.erasure_marks import erasing
from engram.store.store import Store, WriteTxn

L = schema.conversation_log
LP = schema.log_payloads
# What decides exchanges, the unit of learning (engine.exchanges, P4).
_EXCHANGE_ENTRIES = (EntryKind.USER, EntryKind.ASSISTANT, EntryKind.EXCHANGE_END)
CV = schema.conversations
CP = schema.conversation_participants


def log_header(
    conversation: str,
    seq: int,
    at: int,
    entry: str,
    ref: str | None,
    author: str | None,
    status: str | None,
    body: str,
) -> bytes:
    """The chained header of a log row."""
    return chain.header([conversation, seq, at, entry, ref, author, status, body])


def row_header(store: Store, r: Any) -> bytes:
    """The chained header of a stored log row (author by pseudonym, or in clear for rows
    written before pseudonyms)."""

    def header(author: str | None) -> bytes:
        return log_header(r.conversation, r.seq, r.at, r.entry, r.ref, author, r.status, r.body)

    def matches(head: bytes) -> bool:
        payload = bytes(r.payload_hash) if r.payload_hash is not None else None
        return chain.entry_hash(bytes(r.prev_hash), head, payload) == bytes(r.entry_hash)

    return pseudonyms.header_of_row(store, r.author, header, matches)


def row_headers(store: Store, r: Any) -> tuple[bytes, Callable[[], bytes] | None]:
    """A stored log row's header (author by pseudonym), and the one it has if written
    before pseudonyms (pseudonyms.headers_of_row)."""

    def header(author: str | None) -> bytes:
        return log_header(r.conversation, r.seq, r.at, r.entry, r.ref, author, r.status, r.body)

    return pseudonyms.headers_of_row(store, r.author, header)


def readers_by_pseudonym(
    store: Store, created: Mapping[str, Any], excisions: Iterable[Any]
) -> set[str]:
    """Who may read a conversation according to its signed log: the creation entry's
    participants less those an excision removed, each as a pseudonym."""
    removed = {pseudonyms.committed(store, e.get("participant_removed")) for e in excisions}
    return {pseudonyms.pseudonym(store, str(p)) for p in created.get("participants", [])} - removed


def create(
    store: Store,
    txn: WriteTxn,
    participants: Iterable[PersonId],
    *,
    surface: Surface,
    incognito: bool,
    agent: str | None,
    conversation: ConversationId | None = None,
) -> ConversationInfo:
    """Start a conversation: its key, its row, and the signed entry that fixes who reads it.
    Its id is random unless the caller derived one (an idempotency key's)."""
    conversation = conversation or new_conversation_id()
    people = tuple(dict.fromkeys(participants))
    store.keys.data_key(txn.conn, conversation_key_ref(conversation), create=True)
    body = {
        # by pseudonym, so erasing one of them leaves this signed entry naming nobody
        "participants": [pseudonyms.pseudonym(store, p) for p in people],
        "surface": surface.value,
        "incognito": incognito,
        "agent": agent,
    }
    # The row is what the signed creation entry says, its time included, so verify can
    # recompute it from the log.
    created = append_entry(store, txn, conversation, EntryKind.CREATED, body=body)
    txn.conn.execute(
        insert(CV).values(
            id=conversation,
            created_at=to_micros(created.at),
            surface=surface.value,
            incognito=incognito,
            agent=agent,
        )
    )
    txn.conn.execute(insert(CP), [{"conversation": conversation, "person": p} for p in people])
    return ConversationInfo(conversation, created.at, surface, incognito, agent, people)


def append_entry(
    store: Store,
    txn: WriteTxn,
    conversation: ConversationId,
    kind: EntryKind,
    *,
    ref: str | None = None,
    author: str | None = None,
    status: str | None = None,
    body: Mapping[str, Any] | None = None,
    text: str | None = None,
) -> LogEntry:
    """Append one sealed, chained, signed entry to a conversation's log."""
    conn = txn.conn
    lock_chain(conn, chain.log_chain(conversation))
    start = chain.head(
        conn, L, store.info.id, chain.log_chain(conversation), L.c.conversation == conversation
    )
    seq, prev = start.seq + 1, start.prev
    now = store.now_micros()
    store.saw_clock(store_time.behind(chain.log_chain(conversation), start.at, now))
    at = max(now, start.at)
    body_text = crypto.canonical_json(dict(body or {}))
    sealed = None
    if text is not None:
        key = store.keys.data_key(conn, conversation_key_ref(conversation))
        sealed = crypto.seal(
            key, crypto.utf8(text), contexts.log_payload(store.info.id, conversation, seq)
        )
        conn.execute(insert(LP).values(conversation=conversation, seq=seq, sealed=sealed))
    p_hash = chain.payload_hash(sealed)
    committed = pseudonyms.committed(store, author)  # the header names the author by pseudonym
    head = log_header(conversation, seq, at, kind.value, ref, committed, status, body_text)
    entry = chain.entry_hash(prev, head, p_hash)
    conn.execute(
        insert(L).values(
            conversation=conversation,
            seq=seq,
            at=at,
            entry=kind.value,
            ref=ref,
            author=author,
            status=status,
            body=body_text,
            payload_hash=p_hash,
            prev_hash=prev,
            entry_hash=entry,
            signature=chain.UNSIGNED,
        )
    )
    txn.heads[chain.log_chain(conversation)] = (seq, entry)
    return LogEntry(
        conversation,
        seq,
        from_micros(at),
        kind,
        ref,
        author,
        status,
        json.loads(body_text),
        sealed is not None,
        entry,
    )


def lock_log(txn: WriteTxn, conversation: ConversationId) -> None:
    """Hold a conversation's log still for the rest of the write, so what is read now is
    still the log's head when the write appends (appending takes the same lock again)."""
    lock_chain(txn.conn, chain.log_chain(conversation))


def was_erased(store: Store, conn: Connection, conversation: ConversationId) -> bool:
    """Whether a conversation by this id was deleted (or went with an erased person): the
    signed erasure records name every chain they removed by its keyed hash."""
    hidden = store.hidden_name(chain.log_chain(conversation))  # hex digits only
    E = schema.erasures
    return (
        conn.execute(select(E.c.seq).where(E.c.body.contains(hidden)).limit(1)).first() is not None
    )


def _info(conn: Connection, row: Row[Any]) -> ConversationInfo:
    people = conn.execute(
        select(CP.c.person).where(CP.c.conversation == row.id).order_by(CP.c.person)
    ).scalars()
    return ConversationInfo(
        id=ConversationId(row.id),
        created_at=from_micros(int(row.created_at)),
        surface=Surface(row.surface),
        incognito=bool(row.incognito),
        agent=row.agent,
        participants=tuple(PersonId(p) for p in people),
    )


def get(conn: Connection, conversation: ConversationId) -> ConversationInfo | None:
    """A conversation's facts, or None if it does not exist (or was deleted)."""
    row = conn.execute(select(CV).where(CV.c.id == conversation)).first()
    return _info(conn, row) if row else None


_LOG_HEAD = select(
    CV.c.id,
    select(func.max(L.c.seq)).where(L.c.conversation == bindparam("c")).scalar_subquery(),
    select(L.c.entry_hash)
    .where(L.c.conversation == bindparam("c"), L.c.seq == bindparam("s"))
    .scalar_subquery(),
).where(CV.c.id == bindparam("c"))


def log_head(
    conn: Connection, conversation: ConversationId, known_seq: int
) -> tuple[int, bytes | None] | None:
    """For readers that keep up, in one prepared statement: the last sequence number of a
    conversation's log (0 if empty) and the entry hash now at `known_seq` (so a reader can
    tell its copy still matches); None if the conversation does not exist."""
    row = conn.execute(_LOG_HEAD, {"c": conversation, "s": known_seq}).first()
    return None if row is None else (int(row[1] or 0), row[2])


def for_person(
    conn: Connection,
    person: PersonId,
    *,
    after: ConversationInfo | None = None,
    limit: int | None = None,
) -> list[ConversationInfo]:
    """Every conversation a person takes part in, oldest first; or one page of them: the
    first `limit` after `after` (keyset, so a conversation started meanwhile shifts none)."""
    query = (
        select(CV)
        .join(CP, CP.c.conversation == CV.c.id)
        .where(CP.c.person == person)
        .order_by(CV.c.created_at, CV.c.id)
    )
    if after is not None:
        at = to_micros(after.created_at)
        query = query.where(
            or_(CV.c.created_at > at, and_(CV.c.created_at == at, CV.c.id > after.id))
        )
    if limit is not None:
        query = query.limit(limit)
    return [_info(conn, row) for row in conn.execute(query)]


def count_for_person(conn: Connection, person: PersonId) -> int:
    """How many conversations a person takes part in."""
    query = (select(func.count()).select_from(CV).join(CP, CP.c.conversation == CV.c.id)).where(
        CP.c.person == person
    )
    return int(conn.execute(query).scalar_one())


def started_at(
    conn: Connection, person: PersonId, conversations: Iterable[str]
) -> dict[str, datetime]:
    """When each of these conversations of the person began (others are left out)."""
    wanted = sorted(set(conversations))
    found: dict[str, datetime] = {}
    for start in range(0, len(wanted), 500):
        query = (
            select(CV.c.id, CV.c.created_at)
            .join(CP, CP.c.conversation == CV.c.id)
            .where(CP.c.person == person, CV.c.id.in_(wanted[start : start + 500]))
        )
        found.update({row.id: from_micros(int(row.created_at)) for row in conn.execute(query)})
    return found


def _entry(r: Row[Any]) -> LogEntry:
    return LogEntry(
        conversation=ConversationId(r.conversation),
        seq=int(r.seq),
        at=from_micros(int(r.at)),
        kind=EntryKind(r.entry),
        ref=r.ref,
        author=r.author,
        status=r.status,
        body=json.loads(r.body),
        has_payload=r.payload_hash is not None,
        entry_hash=r.entry_hash,
    )


def entries(
    conn: Connection,
    conversation: ConversationId,
    after: int = 0,
    limit: int | None = None,
    kinds: Iterable[EntryKind] | None = None,
) -> list[LogEntry]:
    """The log in order: all of it, or only the entries after sequence number `after` (at
    most `limit` of them: one page; of these `kinds` only, when given)."""
    query = select(L).where(L.c.conversation == conversation, L.c.seq > after)
    if kinds is not None:
        query = query.where(L.c.entry.in_([k.value for k in kinds]))
    query = query.order_by(L.c.seq)
    if limit is not None:
        query = query.limit(limit)
    return [_entry(row) for row in conn.execute(query)]


def unprocessed_exchange_entries(
    conn: Connection, conversation: ConversationId, person: PersonId | None
) -> list[LogEntry]:
    """The user, assistant and exchange-end entries (every status) extraction has not
    handled yet for `person` (all of them when None), in order — the database skips the
    handled turns; which of these may teach is the engine's rule (engine.exchanges, P4)."""
    query = select(L).where(
        L.c.conversation == conversation,
        L.c.entry.in_([k.value for k in _EXCHANGE_ENTRIES]),
    )
    if person is not None:
        P = schema.processed_turns
        done = select(P.c.turn).where(P.c.person == person, P.c.conversation == conversation)
        query = query.where(L.c.ref.is_(None) | L.c.ref.not_in(done))
    return [_entry(row) for row in conn.execute(query.order_by(L.c.seq))]


def entry_by_ref(conn: Connection, conversation: ConversationId, ref: str) -> LogEntry | None:
    """The entry with a turn or call id."""
    row = conn.execute(
        select(L).where(L.c.conversation == conversation, L.c.ref == ref).order_by(L.c.seq)
    ).first()
    return _entry(row) if row else None


def entries_by_ref(conn: Connection, conversation: ConversationId, ref: str) -> list[LogEntry]:
    """Every entry with a turn or call id (a tool call and its result share one), in order."""
    rows = conn.execute(
        select(L).where(L.c.conversation == conversation, L.c.ref == ref).order_by(L.c.seq)
    )
    return [_entry(row) for row in rows]


def entry_texts(
    store: Store, conn: Connection, conversation: ConversationId, seqs: Iterable[int]
) -> dict[int, str | None]:
    """Decrypt some entries' payloads; None where excised or the key is gone."""
    wanted = sorted(set(seqs))
    found: dict[int, str | None] = dict.fromkeys(wanted)
    if not wanted:
        return found
    try:
        key = store.keys.data_key(conn, conversation_key_ref(conversation))
    except KeyGone:
        return found
    rows = conn.execute(
        select(LP.c.seq, LP.c.sealed).where(LP.c.conversation == conversation, LP.c.seq.in_(wanted))
    )
    for row in rows:
        try:
            plain = crypto.unseal(
                key, row.sealed, contexts.log_payload(store.info.id, conversation, row.seq)
            )
        except SealBroken:
            raise damaged(
                f"The store is damaged: conversation {conversation} entry {row.seq} does not open"
            ) from None
        found[int(row.seq)] = plain.decode("utf-8")
    return found


def excise(
    store: Store,
    txn: WriteTxn,
    conversation: ConversationId,
    seqs: list[int],
    actor: str,
    reason: str,
    body: Mapping[str, Any] | None = None,
) -> LogEntry:
    """Delete some entries' payloads; a signed excision entry (reason sealed) records it, so
    the chain still verifies and readers can say what was removed, by whom and when."""
    where = (LP.c.conversation == conversation, LP.c.seq.in_(seqs))
    erasing(
        store,
        txn,
        [bytes(b) for b in txn.conn.execute(select(LP.c.sealed).where(*where)).scalars()],
    )
    txn.conn.execute(LP.delete().where(*where))
    return append_entry(
        store,
        txn,
        conversation,
        EntryKind.EXCISION,
        author=actor,
        body={"excised": seqs, **dict(body or {})},
        text=reason,
    )
