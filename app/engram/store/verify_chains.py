"""The walk of each chain for `verify` (verify.py): every entry against its link and the
chain's signed head (chain_walk.py), payloads against their declared hashes, a journal's
fold replayed as it streams past and then compared with its stored projection, a log's
readers and flags with its conversation row, the ledger with the tables outside the chains.

Every chain streams past once, its payloads joined to it (`STREAM` rows at a time), so
memory stays flat however long a chain is: only the replayed notes themselves are held.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Table, exc, select

from engram.engine.fold import FoldError, apply_event
from engram.model.event_bodies import ConversationDeleted, Deleted
from engram.model.ids import PersonId
from engram.model.notes import PersonMemory
from engram.store import chain, crypto, ledger, projection_memory, schema, signed_heads
from engram.store.chain_walk import ChainWalk
from engram.store.conversation_log import readers_by_pseudonym
from engram.store.conversation_log import row_headers as log_row_headers
from engram.store.erasure import row_header as erasure_row_header
from engram.store.journal import _event
from engram.store.journal import row_headers as journal_row_headers
from engram.store.pseudonyms import pseudonym
from engram.store.rows import plain_rows
from engram.store.store import Store

Walked = tuple[str, int, dict[int, bytes]] | None
MALFORMED = (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError)
# What reading a damaged database raises: wrong types and shapes, and the database's own
# errors (a malformed page, a cell that is not UTF-8).
UNREADABLE = (*MALFORMED, exc.DBAPIError)
# Entries walked between progress reports and checks for Cancel, inside one chain too: a
# person with 100,000 notes is one chain (issue 17 item 8).
CHECK_EVERY = 500


class Stopped(Exception):
    """Cancel was asked for in the middle of a chain."""


@dataclass
class VerifyFindings:
    """What a verify run found, gathered as the walk goes (control/verify_report makes the
    report and its verdict from it)."""

    ok: bool = True
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    chains: int = 0
    entries: int = 0
    cancelled: bool = False
    # A copy brought here without its checkpoint (issue 17 item 12): a warning, and what
    # "Re-anchor this copy…" (`engram checkpoint reanchor`) is offered for.
    no_checkpoint_here: bool = False
    # Verified chain -> (length, head): what `engram checkpoint reanchor` anchors.
    heads: dict[str, tuple[int, bytes]] = field(default_factory=dict, repr=False)
    # Called every CHECK_EVERY entries while a chain is walked (progress, Cancel).
    on_entries: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    def problem(self, text: str) -> None:
        """Record a problem."""
        self.ok = False
        self.problems.append(text)


_VERIFIERS: dict[bytes, crypto.Verifier] = {}


def _verifier(store: Store) -> crypto.Verifier:
    key = store.info.verify_key
    if key not in _VERIFIERS:
        _VERIFIERS.clear()
        _VERIFIERS[key] = crypto.Verifier(key)
    return _VERIFIERS[key]


# Rows fetched from the database at a time while a chain streams past (flat memory:
# nothing reads a whole journal at once; PostgreSQL uses a server-side cursor).
STREAM = 256


@dataclass
class ChainContext:
    """What every chain's walk is checked against: the signed heads (by keyed chain
    name) and the lengths the checkpoint saw (whose hashes the rollback check compares)."""

    signed: dict[str, signed_heads.SignedHead]
    checkpoint: dict[str, int]

    def walk(self, store: Store, chain_id: str) -> ChainWalk:
        hidden = store.hidden_name(chain_id)
        keep = (self.checkpoint[hidden],) if hidden in self.checkpoint else ()
        return ChainWalk(store.info.id, chain_id, _verifier(store), self.signed.get(hidden), keep)


def _step(
    walk: ChainWalk,
    r: Any,
    head: bytes | tuple[bytes, Callable[[], bytes] | None],
    report: VerifyFindings,
    payload_hash: bytes | None = None,
) -> bool:
    """Walk one streamed row (`payload_hash`: its declared one, for chains with payloads);
    False (and the problem reported) when it breaks the chain."""
    report.entries += 1
    if report.on_entries is not None and report.entries % CHECK_EVERY == 0:
        report.on_entries()
    header, legacy = head if isinstance(head, tuple) else (head, None)
    found = walk.step(
        r.seq,
        bytes(r.prev_hash),
        bytes(r.entry_hash),
        bytes(r.signature),
        header,
        payload_hash,
        legacy,
    )
    if found is not None:
        report.problem(found)
    return found is None


def _finish(walk: ChainWalk, report: VerifyFindings) -> tuple[int, dict[int, bytes]]:
    """The walked chain's length and kept hashes, its signed head checked. Its links held,
    so a signed head that does not match it (a cut or added tail, a head row deleted) is
    reported and the chain still goes on to the other checks and the checkpoint's, which
    says whether an older copy was put back."""
    found = walk.finish()
    if found is not None:
        report.problem(found)
    return walk.length, walk.hashes


class _Payloads:
    """The payload checks of one chain, made as its rows stream past: each present
    payload against its declared hash, and each missing one against the records that
    removed it (known only by the chain's end)."""

    def __init__(self, chain_id: str) -> None:
        self.chain_id = chain_id
        self.problem: str | None = None
        self.missing: list[int] = []
        self.removed: set[int] = set()

    def see(self, seq: int, declared: bytes | None, sealed: bytes | None) -> None:
        if sealed is not None:
            if chain.payload_hash(bytes(sealed)) != declared and self.problem is None:
                self.problem = f"{self.chain_id}: entry {seq}: its payload was changed"
        elif declared is not None:
            self.missing.append(seq)

    def finish(self, stray: int | None, report: VerifyFindings) -> bool:
        if stray is not None:
            report.problem(f"{self.chain_id}: a payload exists for missing entry {stray}")
            return False
        if self.problem is not None:
            report.problem(self.problem)
            return False
        for seq in self.missing:
            if seq not in self.removed:
                report.problem(
                    f"{self.chain_id}: entry {seq}: its payload is missing without a record"
                )
                return False
        return True


def _with_payloads(
    conn: Connection, entries: Table, sealed: Table, owner: str, name: str
) -> Iterator[Any]:
    """The chain `name` of `entries` (owned by column `owner`) in order, each row with its
    payload's `sealed` (None where it was removed), streamed STREAM rows at a time."""
    query = (
        select(entries, sealed.c.sealed)
        .outerjoin(sealed, (sealed.c[owner] == entries.c[owner]) & (sealed.c.seq == entries.c.seq))
        .where(entries.c[owner] == name)
        .order_by(entries.c.seq)
        .execution_options(yield_per=STREAM)
    )
    return plain_rows(conn.execute(query))


def _stray_payload(
    conn: Connection, entries: Table, sealed: Table, owner: str, name: str
) -> int | None:
    """The first payload of chain `name` whose entry does not exist, if any."""
    orphan = ~(
        select(entries.c.seq)
        .where(entries.c[owner] == sealed.c[owner], entries.c.seq == sealed.c.seq)
        .exists()
    )
    found = conn.execute(
        select(sealed.c.seq).where(sealed.c[owner] == name, orphan).order_by(sealed.c.seq).limit(1)
    ).scalar()
    return None if found is None else int(found)


def _sorted_names(names: set[Any]) -> list[str]:
    if not all(isinstance(name, str) for name in names):
        raise ValueError("a row names no one (an empty or non-text key)")
    return sorted(names)


def journal_names(conn: Connection) -> list[str]:
    J = schema.journal
    return _sorted_names(
        set(conn.execute(select(schema.persons.c.id)).scalars())
        | set(conn.execute(select(J.c.person).distinct()).scalars())
    )


def walk_journal(
    store: Store, conn: Connection, person: str, report: VerifyFindings, ctx: ChainContext
) -> Walked:
    """One pass over a person's journal, streamed with its payloads: links, payloads and
    the replay of the fold together; then the replay against the stored projection."""
    J, JP = schema.journal, schema.journal_payloads
    chain_id = chain.journal_chain(person)
    walk = ctx.walk(store, chain_id)
    payloads = _Payloads(chain_id)
    memory = PersonMemory(PersonId(person))
    fold_error: FoldError | None = None
    for r in _with_payloads(conn, J, JP, "person", person):
        declared = None if r.payload_hash is None else bytes(r.payload_hash)
        if not _step(walk, r, journal_row_headers(store, r), report, declared):
            return None
        payloads.see(r.seq, declared, r.sealed)
        event = _event(r)
        if isinstance(event.body, ConversationDeleted | Deleted):  # C4; a note forgotten
            payloads.removed.update(event.body.shredded)
        if fold_error is None:
            try:
                apply_event(memory, event)
            except FoldError as error:
                fold_error = error
    walked = _finish(walk, report)
    if not payloads.finish(_stray_payload(conn, J, JP, "person", person), report):
        return None
    if fold_error is not None:
        report.problem(f"journal:{person}: replay fails: {fold_error}")
    elif not projection_memory.matches_replay(conn, PersonId(person), memory):
        report.problem(f"journal:{person}: the stored notes differ from a replay of the journal")
    memory.let_go()
    return chain_id, walked[0], walked[1]


def log_names(conn: Connection) -> list[str]:
    L, CV = schema.conversation_log, schema.conversations
    return _sorted_names(
        set(conn.execute(select(CV.c.id)).scalars())
        | set(conn.execute(select(L.c.conversation).distinct()).scalars())
    )


def walk_log(
    store: Store, conn: Connection, conversation: str, report: VerifyFindings, ctx: ChainContext
) -> Walked:
    L, LP, CV, CP = (
        schema.conversation_log,
        schema.log_payloads,
        schema.conversations,
        schema.conversation_participants,
    )
    chain_id = chain.log_chain(conversation)
    walk = ctx.walk(store, chain_id)
    payloads = _Payloads(chain_id)
    first: Any = None
    excisions: list[Any] = []
    for r in _with_payloads(conn, L, LP, "conversation", conversation):
        declared = None if r.payload_hash is None else bytes(r.payload_hash)
        if not _step(walk, r, log_row_headers(store, r), report, declared):
            return None
        if first is None:
            first = (json.loads(r.body), int(r.at))
        payloads.see(r.seq, declared, r.sealed)
        if r.entry == "excision":
            body = json.loads(r.body)
            excisions.append(body)
            payloads.removed.update(body.get("excised", []))
    walked = _finish(walk, report)
    if not payloads.finish(_stray_payload(conn, L, LP, "conversation", conversation), report):
        return None
    row = conn.execute(select(CV).where(CV.c.id == conversation)).first()
    people = sorted(
        conn.execute(select(CP.c.person).where(CP.c.conversation == conversation)).scalars()
    )
    created, first_at = first if first is not None else ({}, 0)
    readers = readers_by_pseudonym(store, created, excisions)
    if (
        row is None
        or first is None
        or (
            readers != {pseudonym(store, p) for p in people}
            or created.get("surface") != row.surface
            or bool(created.get("incognito")) != bool(row.incognito)
            or created.get("agent") != row.agent
            or int(row.created_at) != first_at
        )
    ):
        report.problem(f"{chain_id}: the conversation's readers or flags differ from its log")
        return None
    return chain_id, walked[0], walked[1]


def walk_ledger(
    store: Store, conn: Connection, _name: str, report: VerifyFindings, ctx: ChainContext
) -> Walked:
    """Walk the ledger, then compare every row of the tables it covers with its replay."""
    LG = schema.ledger
    walk = ctx.walk(store, ledger.CHAIN)
    broken = False
    for r in conn.execute(select(LG).order_by(LG.c.seq).execution_options(yield_per=STREAM)):
        if not _step(walk, r, ledger.entry_header(r.seq, r.at, r.body), report):
            broken = True
            break
    walked = None if broken else _finish(walk, report)
    if walked is None:
        report.problem(
            "ledger: the tables outside the chains could not be checked, as the ledger is broken"
        )
        return None
    key = ledger.ledger_key(store.signer.seed)
    bodies = conn.execute(
        select(LG.c.body).order_by(LG.c.seq).execution_options(yield_per=STREAM)
    ).scalars()
    for problem in ledger.differences(conn, key, bodies):
        report.problem(problem)
    return (ledger.CHAIN, walked[0], walked[1]) if walked[0] else None


def walk_erasures(
    store: Store, conn: Connection, _name: str, report: VerifyFindings, ctx: ChainContext
) -> Walked:
    E = schema.erasures
    walk = ctx.walk(store, chain.ERASURE_CHAIN)
    # Erasure records have no payload column: the link carries none.
    for r in conn.execute(select(E).order_by(E.c.seq).execution_options(yield_per=STREAM)):
        if not _step(walk, r, erasure_row_header(store, r), report):
            return None
    walked = _finish(walk, report)
    if not walked[0]:
        return None
    return chain.ERASURE_CHAIN, walked[0], walked[1]
