"""Per-person journals: append (seal, chain, sign, fold into the projection) and read."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, insert, select

from engram.engine.fold import FoldError, apply_event
from engram.engine.fold_target import StaleRevision
from engram.model.clock import from_micros, to_micros
from engram.model.errors import Conflict, NotAllowed, NotFound, damaged
from engram.model.event_bodies import EventBody, decode_body
from engram.model.events import TEXT_BEARING, Cause, Event, EventType, NewEvent
from engram.model.ids import ConversationId, NoteId, PersonId, TurnId
from engram.store import chain, contexts, crypto, pseudonyms, schema, store_time
from engram.store.crypto import SealBroken
from engram.store.data_keys import KeyGone, person_key_ref
from engram.store.dialect import lock_chain
from engram.store.projection import ProjectionTarget
from engram.store.rows import plain_rows
from engram.store.store import Store, WriteTxn

J = schema.journal
JP = schema.journal_payloads


def journal_header(
    person: str,
    seq: int,
    at: int,
    actor: str,
    type_: str,
    cause_conversation: str | None,
    cause_turn: str | None,
    body: str,
    key_ref: str | None,
) -> bytes:
    """The chained header of a journal row (its clear columns)."""
    return chain.header(
        [person, seq, at, actor, type_, cause_conversation, cause_turn, body, key_ref]
    )


def _stored_header(r: Any, actor: str | None) -> bytes:
    """The chained header of a stored journal row, with `actor` as it is chained."""
    return journal_header(
        r.person,
        r.seq,
        r.at,
        str(actor),
        r.type,
        r.cause_conversation,
        r.cause_turn,
        r.body,
        r.key_ref,
    )


def row_header(store: Store, r: Any) -> bytes:
    """The chained header of a stored journal row (actor by pseudonym, or in clear for rows
    written before pseudonyms)."""

    def header(actor: str | None) -> bytes:
        return _stored_header(r, actor)

    def matches(head: bytes) -> bool:
        payload = bytes(r.payload_hash) if r.payload_hash is not None else None
        return chain.entry_hash(bytes(r.prev_hash), head, payload) == bytes(r.entry_hash)

    return pseudonyms.header_of_row(store, r.actor, header, matches)


def row_headers(store: Store, r: Any) -> tuple[bytes, Callable[[], bytes] | None]:
    """A stored journal row's header (actor by pseudonym), and the one it has if written
    before pseudonyms (pseudonyms.headers_of_row)."""

    def header(actor: str | None) -> bytes:
        return _stored_header(r, actor)

    return pseudonyms.headers_of_row(store, r.actor, header)


def person_exists(conn: Connection, person: PersonId) -> bool:
    """Whether the store has this person."""
    found = conn.execute(select(schema.persons.c.id).where(schema.persons.c.id == person))
    return found.first() is not None


def require_person(conn: Connection, person: PersonId) -> None:
    """NotFound unless the person exists."""
    if not person_exists(conn, person):
        raise NotFound(f"There is no person {person!r} in this store.")


def ensure_person(
    store: Store,
    txn: WriteTxn,
    person: PersonId,
    name: str | None = None,
    actor: str = "engram",
) -> bool:
    """Create the person (data key, row, first journal event, recorded under `actor`) if
    new; True if created."""
    lock(txn, person)  # two writers creating one new person: the second waits, then sees it
    if person_exists(txn.conn, person):
        return False
    key = store.keys.data_key(txn.conn, person_key_ref(person), create=True)
    sealed = (
        crypto.seal(key, name.encode(), contexts.person_name(store.info.id, person))
        if name
        else None
    )
    txn.conn.execute(
        insert(schema.persons).values(id=person, created_at=store.now_micros(), sealed_name=sealed)
    )
    store.touched(schema.persons, person)
    append(store, txn, person, [NewEvent(EventType.PERSON_CREATED, actor=actor)])
    return True


def lock(txn: WriteTxn, person: PersonId) -> None:
    """Hold the person's journal for the rest of the write, before reading what the write
    depends on (PostgreSQL; SQLite's writer already holds the whole database)."""
    lock_chain(txn.conn, chain.journal_chain(person))


def append(
    store: Store, txn: WriteTxn, person: PersonId, new_events: Sequence[NewEvent]
) -> list[Event]:
    """Append events to a person's journal and fold them into the projection, atomically.

    Each event is first applied to the projection with the engine's fold; an event that
    does not follow (a closed or unknown note) raises NotAllowed and nothing is written.
    """
    conn = txn.conn
    lock_chain(conn, chain.journal_chain(person))
    require_person(conn, person)  # an erased person gets no new journal behind anyone's back
    start = chain.head(conn, J, store.info.id, chain.journal_chain(person), J.c.person == person)
    seq, prev = start.seq, start.prev
    target = ProjectionTarget(conn, person)
    target.prefetch(_named_notes(new_events))
    if target.seq != seq:
        raise damaged(f"The store is damaged: {person}'s notes and journal disagree")
    rows: list[dict[str, object]] = []
    payloads: list[dict[str, object]] = []
    committed: list[Event] = []
    # One batch is one moment: its events share a time, ordered by their sequence numbers;
    # never before the journal's newest entry, even when the clock is (store_time.py).
    clock = to_micros(store.now())  # the clock as it is: store_time keeps the order
    stamped = store_time.stamp_after(conn, person, start.seq, start.at, clock)
    store.saw_clock(store_time.behind(chain.journal_chain(person), start.at, clock))
    at, when = stamped.at, from_micros(stamped.at)
    for new in new_events:
        seq += 1
        kept = new.body.to_json()
        plain = crypto.canonical_json(kept)
        body = plain
        if stamped.clock_at is not None:  # chained with the event, read by the next one
            kept[store_time.CLOCK_KEY] = stamped.clock_at
            body = crypto.canonical_json(kept)
        cause = new.cause
        event = Event(
            person=person,
            seq=seq,
            at=when,
            actor=new.actor,
            type=new.type,
            body=decode_body(new.type, json.loads(plain)),  # as a reader will see it
            cause=cause,
            has_payload=new.text is not None,
        )
        try:
            apply_event(target, event)
        except StaleRevision as error:
            raise Conflict(
                f"Someone else decided first: {error}; reload it and decide again."
            ) from None
        except FoldError as error:
            raise NotAllowed(f"That change does not apply: {error}.") from None
        key_ref: str | None = None
        sealed: bytes | None = None
        if new.text is not None:
            try:
                key_ref, key = store.keys.text_key(conn, person, new.text_origin)
            except KeyGone:
                raise NotAllowed(
                    f"{person}'s keys for that text are gone (erased or deleted); nothing was "
                    "written."
                ) from None
            sealed = crypto.seal(
                key,
                crypto.utf8(new.text),
                contexts.journal_payload(store.info.id, person, seq, key_ref),
            )
            payloads.append({"person": person, "seq": seq, "sealed": sealed})
        head_bytes = journal_header(
            person,
            seq,
            at,
            pseudonyms.pseudonym(store, new.actor),  # the header names the actor by pseudonym
            new.type.value,
            cause.conversation if cause else None,
            cause.turn if cause else None,
            body,
            key_ref,
        )
        p_hash = chain.payload_hash(sealed)
        entry = chain.entry_hash(prev, head_bytes, p_hash)
        rows.append(
            {
                "person": person,
                "seq": seq,
                "at": at,
                "actor": new.actor,
                "type": new.type.value,
                "cause_conversation": cause.conversation if cause else None,
                "cause_turn": cause.turn if cause else None,
                "body": body,
                "key_ref": key_ref,
                "payload_hash": p_hash,
                "prev_hash": prev,
                "entry_hash": entry,
                "signature": chain.UNSIGNED,
            }
        )
        prev = entry
        committed.append(event)
    if rows:
        conn.execute(insert(J), rows)
    if payloads:
        conn.execute(insert(JP), payloads)
    target.flush()
    chain_id = chain.journal_chain(person)
    txn.heads[chain_id] = (seq, prev)
    if start.seq == 0 and rows:
        txn.revived[chain_id] = store.hidden_name(chain_id)
    return committed


def _named_notes(new_events: Sequence[NewEvent]) -> list[NoteId]:
    """Every note id a batch of events names (the fold will look each one up)."""
    return [n for new in new_events for n in (*new.body.named_notes(), *new.body.listed_notes())]


def _meaning(type_: EventType, body: dict[str, Any]) -> EventBody:
    """An event's body as its type defines it: the clock reading kept beside a time that
    differs from it (store_time.py) is the journal's business, not the event's."""
    body.pop(store_time.CLOCK_KEY, None)
    return decode_body(type_, body)


_TYPES = {kind.value: kind for kind in EventType}  # EventType(value), without enum's call


def _event(r: Row[Any]) -> Event:
    cause = (
        Cause(ConversationId(r.cause_conversation), TurnId(r.cause_turn) if r.cause_turn else None)
        if r.cause_conversation
        else None
    )
    kind = _TYPES.get(r.type) or EventType(r.type)  # an unknown type raises as it did
    return Event(
        person=PersonId(r.person),
        seq=int(r.seq),
        at=from_micros(int(r.at)),
        actor=r.actor,
        type=kind,
        body=_meaning(kind, json.loads(r.body)),
        cause=cause,
        has_payload=r.payload_hash is not None,
    )


def events(
    conn: Connection,
    person: PersonId,
    *,
    until: datetime | None = None,
    after_seq: int = 0,
    limit: int | None = None,
) -> Iterator[Event]:
    """The journal's events in order (clear parts only), optionally up to a moment, or only
    the first `limit` after `after_seq` (one page)."""
    query = select(J).where(J.c.person == person, J.c.seq > after_seq).order_by(J.c.seq)
    if until is not None:
        query = query.where(J.c.at <= to_micros(until))
    if limit is not None:
        query = query.limit(limit)
    for row in plain_rows(conn.execute(query)):
        yield _event(row)


def texts(
    store: Store, conn: Connection, person: PersonId, seqs: Iterable[int]
) -> dict[int, str | None]:
    """Decrypt the payloads of some events; None where the text was shredded or its key
    destroyed (an erased conversation's notes). A payload that fails to open is tampering.
    """
    wanted = sorted(set(seqs))
    found: dict[int, str | None] = dict.fromkeys(wanted)
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        _open_payloads(store, conn, person, found, J.c.seq.in_(chunk))
    return found


def note_texts_after(
    store: Store, conn: Connection, person: PersonId, after_seq: int, until_seq: int | None = None
) -> dict[int, str]:
    """Decrypt the text of every note created after `after_seq` (up to `until_seq`), by
    event seq, in one pass (an in-memory search index is built from it); shredded texts
    are left out."""
    found: dict[int, str | None] = {}
    where = [J.c.seq > after_seq, J.c.type.in_([t.value for t in TEXT_BEARING])]
    if until_seq is not None:
        where.append(J.c.seq <= until_seq)
    _open_payloads(store, conn, person, found, *where)
    return {seq: text for seq, text in found.items() if text is not None}


def _open_payloads(
    store: Store, conn: Connection, person: PersonId, found: dict[int, str | None], *where: Any
) -> None:
    rows = conn.execute(
        select(J.c.seq, J.c.key_ref, JP.c.sealed)
        .join(JP, (JP.c.person == J.c.person) & (JP.c.seq == J.c.seq))
        .where(J.c.person == person, *where)
    )
    for row in rows:
        try:
            key = store.keys.key_for_ref(conn, row.key_ref)
        except KeyGone:
            continue
        aad = contexts.journal_payload(store.info.id, person, int(row.seq), row.key_ref)
        try:
            found[int(row.seq)] = crypto.unseal(key, row.sealed, aad).decode("utf-8")
        except SealBroken:
            raise damaged(
                f"The store is damaged: {person}'s journal entry {row.seq} does not open"
            ) from None


def event_at(conn: Connection, person: PersonId, seq: int) -> Event | None:
    """One event of a person's journal (clear parts), or None."""
    row = conn.execute(select(J).where(J.c.person == person, J.c.seq == seq)).first()
    return _event(row) if row else None


def last_event_by(
    conn: Connection, person: PersonId, actor: str, types: Iterable[EventType], after_seq: int = 0
) -> Event | None:
    """The newest event of these types that `actor` appended after `after_seq`, or None."""
    query = select(J).where(
        J.c.person == person,
        J.c.seq > after_seq,
        J.c.actor == actor,
        J.c.type.in_([t.value for t in types]),
    )
    row = conn.execute(query.order_by(J.c.seq.desc()).limit(1)).first()
    return _event(row) if row else None


def events_caused_by(
    conn: Connection,
    person: PersonId,
    conversation: ConversationId,
    turns: Sequence[TurnId],
    types: Iterable[EventType],
) -> list[Event]:
    """A person's events of these types caused by some turns of a conversation, in order."""
    query = select(J).where(
        J.c.person == person,
        J.c.cause_conversation == conversation,
        J.c.cause_turn.in_(list(turns)),
        J.c.type.in_([t.value for t in types]),
    )
    return [_event(row) for row in plain_rows(conn.execute(query.order_by(J.c.seq)))]


def events_of_types(
    conn: Connection, person: PersonId, types: Iterable[EventType]
) -> Iterator[Event]:
    """A person's events of some types, in order."""
    query = select(J).where(J.c.person == person, J.c.type.in_([t.value for t in types]))
    for row in plain_rows(conn.execute(query.order_by(J.c.seq))):
        yield _event(row)


def head_seq(conn: Connection, person: PersonId) -> int:
    """The last seq in a person's journal (0 if empty)."""
    value = conn.execute(
        select(J.c.seq).where(J.c.person == person).order_by(J.c.seq.desc()).limit(1)
    ).scalar()
    return int(value or 0)


def head(conn: Connection, person: PersonId) -> tuple[int, bytes] | None:
    """The last event's seq and entry hash (None for an empty journal): a held copy of a
    person's plaintext is current while these stand."""
    row = conn.execute(
        select(J.c.seq, J.c.entry_hash)
        .where(J.c.person == person)
        .order_by(J.c.seq.desc())
        .limit(1)
    ).first()
    return (int(row.seq), bytes(row.entry_hash)) if row else None


def entry_hash(conn: Connection, person: PersonId, seq: int) -> bytes:
    """The entry hash of event `seq` (empty for seq 0 or an event that is not there): a
    held fold is current with the journal while its last event's hash stands."""
    value = conn.execute(
        select(J.c.entry_hash).where(J.c.person == person, J.c.seq == seq)
    ).scalar()
    return bytes(value) if value is not None else b""


def head_if_only(
    conn: Connection,
    person: PersonId,
    head: tuple[int, bytes],
    kinds: Collection[EventType],
    look_ahead: int,
) -> tuple[int, bytes] | None:
    """The journal's head now, if since `head` only events of `kinds` were appended; None
    if `head` is gone or rewritten (an erased and rebuilt journal), another kind of event
    came, or more than `look_ahead` did."""
    rows = conn.execute(
        select(J.c.seq, J.c.entry_hash, J.c.type)
        .where(J.c.person == person, J.c.seq >= head[0])
        .order_by(J.c.seq)
        .limit(look_ahead + 2)
    ).all()
    if not rows or (int(rows[0].seq), bytes(rows[0].entry_hash)) != head:
        return None
    if len(rows) > look_ahead + 1 or any(r.type not in kinds for r in rows[1:]):
        return None
    return int(rows[-1].seq), bytes(rows[-1].entry_hash)
