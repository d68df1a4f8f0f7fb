"""`verify`: run the database's own page check, walk every chain against its signed head
(chain_walk.py), recheck payload hashes, replay every journal against its projection, replay
the ledger against the tables outside the chains, and compare chain heads with the signed
checkpoint (rollback).

Every chain streams past once, its payloads joined to it (`STREAM` rows at a time): a
journal's links, payloads and the fold's replay are checked in one pass, so memory stays
flat however long a chain is — only the replayed notes themselves are held.

Reports name the first bad entry of each chain; it never changes anything. Damage the
database reports while reading (a malformed page, text that is not UTF-8) becomes a
problem of the chain being read, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, exc, func, select

from engram.engine.fold import FoldError, apply_event
from engram.model.clock import to_micros
from engram.model.errors import UnreadableData
from engram.model.event_bodies import ConversationDeleted, Deleted
from engram.model.ids import PersonId
from engram.model.notes import PersonMemory
from engram.store import (
    chain,
    crypto,
    ledger,
    migrate,
    projection_memory,
    schema,
    signed_heads,
    store_time,
)
from engram.store.chain_walk import ChainWalk
from engram.store.checkpoint_check import (
    Before,
    check_checkpoint,
    copy_without_checkpoint,
    read_before,
)
from engram.store.conversation_log import readers_by_pseudonym
from engram.store.conversation_log import row_headers as log_row_headers
from engram.store.data_keys import conversation_key_ref, person_key_ref
from engram.store.dialect import storage_check
from engram.store.erasure import row_header as erasure_row_header
from engram.store.erasure import unexplained_pseudonyms
from engram.store.journal import _event
from engram.store.journal import row_headers as journal_row_headers
from engram.store.pseudonyms import pseudonym
from engram.store.rows import plain_rows
from engram.store.store import Store

Progress = Callable[[int, int], None]
Walked = tuple[str, int, dict[int, bytes]] | None
MALFORMED = (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError)
# What reading a damaged database raises: wrong types and shapes, and the database's own
# errors (a malformed page, a cell that is not UTF-8).
UNREADABLE = (*MALFORMED, exc.DBAPIError)
Cancelled = Callable[[], bool]
# Entries walked between progress reports and checks for Cancel, inside one chain too: a
# person with 100,000 notes is one chain (issue 17 item 8).
CHECK_EVERY = 500


class _Stopped(Exception):
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
class _Context:
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


def _sorted_names(names: set[Any]) -> list[str]:
    if not all(isinstance(name, str) for name in names):
        raise ValueError("a row names no one (an empty or non-text key)")
    return sorted(names)


def _journal_names(conn: Connection) -> list[str]:
    J = schema.journal
    return _sorted_names(
        set(conn.execute(select(schema.persons.c.id)).scalars())
        | set(conn.execute(select(J.c.person).distinct()).scalars())
    )


def _journal(
    store: Store, conn: Connection, person: str, report: VerifyFindings, ctx: _Context
) -> Walked:
    """One pass over a person's journal, streamed with its payloads: links, payloads and
    the replay of the fold together; then the replay against the stored projection."""
    J, JP = schema.journal, schema.journal_payloads
    chain_id = chain.journal_chain(person)
    walk = ctx.walk(store, chain_id)
    payloads = _Payloads(chain_id)
    memory = PersonMemory(PersonId(person))
    fold_error: FoldError | None = None
    query = (
        select(J, JP.c.sealed)
        .outerjoin(JP, (JP.c.person == J.c.person) & (JP.c.seq == J.c.seq))
        .where(J.c.person == person)
        .order_by(J.c.seq)
        .execution_options(yield_per=STREAM)
    )
    for r in plain_rows(conn.execute(query)):
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
    stray = conn.execute(
        select(JP.c.seq)
        .where(
            JP.c.person == person,
            ~select(J.c.seq).where(J.c.person == JP.c.person, J.c.seq == JP.c.seq).exists(),
        )
        .order_by(JP.c.seq)
        .limit(1)
    ).scalar()
    if not payloads.finish(None if stray is None else int(stray), report):
        return None
    if fold_error is not None:
        report.problem(f"journal:{person}: replay fails: {fold_error}")
    elif not projection_memory.matches_replay(conn, PersonId(person), memory):
        report.problem(f"journal:{person}: the stored notes differ from a replay of the journal")
    memory.let_go()
    return chain_id, walked[0], walked[1]


def _log_names(conn: Connection) -> list[str]:
    L, CV = schema.conversation_log, schema.conversations
    return _sorted_names(
        set(conn.execute(select(CV.c.id)).scalars())
        | set(conn.execute(select(L.c.conversation).distinct()).scalars())
    )


def _log(
    store: Store, conn: Connection, conversation: str, report: VerifyFindings, ctx: _Context
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
    query = (
        select(L, LP.c.sealed)
        .outerjoin(LP, (LP.c.conversation == L.c.conversation) & (LP.c.seq == L.c.seq))
        .where(L.c.conversation == conversation)
        .order_by(L.c.seq)
        .execution_options(yield_per=STREAM)
    )
    for r in plain_rows(conn.execute(query)):
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
    stray = conn.execute(
        select(LP.c.seq)
        .where(
            LP.c.conversation == conversation,
            ~select(L.c.seq)
            .where(L.c.conversation == LP.c.conversation, L.c.seq == LP.c.seq)
            .exists(),
        )
        .order_by(LP.c.seq)
        .limit(1)
    ).scalar()
    if not payloads.finish(None if stray is None else int(stray), report):
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


def _ledger(
    store: Store, conn: Connection, _name: str, report: VerifyFindings, ctx: _Context
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


def _orphans(conn: Connection, journals: set[str], logs: set[str], report: VerifyFindings) -> None:
    """Derived and payload rows must belong to a journal or a log that exists (the
    `conversations` row is checked with its log)."""
    for table in schema.metadata.sorted_tables:
        if schema.PROTECTION[table.name] not in (
            schema.Protection.DERIVED,
            schema.Protection.PAYLOAD,
        ):
            continue
        chain_id: Callable[[str], str]
        if table.name in ("conversation_participants", "log_payloads"):
            owner, known, chain_id = table.c.conversation, logs, chain.log_chain
        elif "person" in table.c:
            owner, known, chain_id = table.c.person, journals, chain.journal_chain
        else:
            continue
        stray = set(map(str, conn.execute(select(owner).distinct()).scalars())) - known
        for name in sorted(stray):
            report.problem(
                f"{table.name}: rows for {chain_id(name)}, which does not exist (added outside "
                "Engram)"
            )


def _revision(conn: Connection, report: VerifyFindings) -> None:
    current = migrate.current_revision(conn)
    if current != migrate.head_revision():
        report.problem(
            f"alembic_version: the store says schema version {current}, but its tables are "
            f"version {migrate.head_revision()} (the record was changed)"
        )


def _erasures(
    store: Store, conn: Connection, _name: str, report: VerifyFindings, ctx: _Context
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


def _stray_heads(
    store: Store, planned: Iterable[str], ctx: _Context, report: VerifyFindings
) -> None:
    """A signed head for a chain the store has no trace of (added outside Engram, or
    left behind when its rows were deleted outside Engram)."""
    known = {store.hidden_name(chain_id) for chain_id in planned}
    stray = sorted(set(ctx.signed) - known)
    if stray:
        rows = "a signed head" if len(stray) == 1 else f"{len(stray)} signed heads"
        report.problem(
            f"chain_heads: {rows} for chains that hold no entries (keyed hash "
            f"{stray[0][:16]}…); added outside Engram, or what remains of a chain deleted "
            "outside Engram"
        )


def _keys(store: Store, conn: Connection, report: VerifyFindings) -> None:
    rows = conn.execute(select(schema.data_keys.c.key_ref, schema.data_keys.c.wrapped)).all()
    present = set()
    for key_ref, wrapped in rows:
        present.add(key_ref)
        if not store.keys.key_opens(key_ref, bytes(wrapped)):
            report.problem(f"data key {key_ref}: it does not open")
    # Every key something still needs must be there: a deleted key row silently makes text
    # unreadable, which only erasure and conversation deletion may do (and they say so).
    needed = {person_key_ref(p) for p in conn.execute(select(schema.persons.c.id)).scalars()}
    needed |= {
        conversation_key_ref(c) for c in conn.execute(select(schema.conversations.c.id)).scalars()
    }
    J, JP = schema.journal, schema.journal_payloads
    refs = conn.execute(
        select(J.c.key_ref).join(JP, (JP.c.person == J.c.person) & (JP.c.seq == J.c.seq)).distinct()
    ).scalars()
    for ref in refs:
        kind, _, rest = str(ref).partition(":")
        if kind == "note":
            person, _, conversation = rest.rpartition(":")
            needed |= {person_key_ref(person), conversation_key_ref(conversation)}
        else:
            needed.add(str(ref))
    for missing in sorted(needed - present):
        report.problem(f"data key {missing}: it is missing, so what it sealed cannot be read")


def _detail(error: Exception) -> str:
    if isinstance(error, exc.DBAPIError):
        return str(error.orig)
    return f"{type(error).__name__}: {error}"


def _unreadable(error: Exception) -> str:
    if isinstance(error, exc.DBAPIError):
        return f"cannot be read ({_detail(error)})"
    return f"a malformed entry ({_detail(error)})"


def _names(
    list_names: Callable[[Connection], list[str]],
    conn: Connection,
    what: str,
    report: VerifyFindings,
) -> list[str]:
    try:
        return list_names(conn)
    except UNREADABLE as error:
        report.problem(f"{what}: could not be listed ({_detail(error)})")
        return []


def verify(
    store: Store,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
    *,
    against_checkpoint: bool = True,
) -> VerifyFindings:
    """Check the whole store; never writes the database (a lagging checkpoint is advanced)."""
    report = VerifyFindings()
    heads: dict[str, tuple[int, dict[int, bytes]]] = {}
    anchored = read_before(store)  # before the snapshot: a write landing meanwhile is no rollback
    with store.read() as conn:
        problems, note = storage_check(conn)
        for problem in problems:
            report.problem(f"storage: {problem}")
        if note:
            report.warnings.append(note)
        before = len(report.problems)
        journals = _names(_journal_names, conn, "journals", report)
        logs = _names(_log_names, conn, "conversation logs", report)
        listed = len(report.problems) == before
        ctx = _context(conn, anchored, report)
        entries = _entry_count(conn) if progress or cancelled else 0
        report.on_entries = _within_chains(report, entries, progress, cancelled)
        plan = [
            *((chain.journal_chain(name), name, _journal) for name in journals),
            *((chain.log_chain(name), name, _log) for name in logs),
            (ledger.CHAIN, ledger.CHAIN, _ledger),
            (chain.ERASURE_CHAIN, chain.ERASURE_CHAIN, _erasures),
        ]
        for done, (label, name, check) in enumerate(plan, start=1):
            try:
                walked = check(store, conn, name, report, ctx)
            except _Stopped:
                walked, cancelled = None, lambda: True
            except UNREADABLE as error:
                # Wrong types or damaged pages written behind Engram's back are problems,
                # not crashes.
                report.problem(f"{label}: {_unreadable(error)}")
                walked = None
            if walked is not None:
                chain_id, length, hashes = walked
                heads[chain_id] = (length, hashes)
                if length:
                    report.heads[chain_id] = (length, hashes[length])
                report.chains += 1
            if progress and not entries:
                progress(done, len(plan))
            if cancelled and cancelled():
                report.cancelled = True
                report.warnings.append("verify was cancelled before it finished")
                return report
        last_checks: list[tuple[str, Callable[[], None]]] = [
            ("data keys", lambda: _keys(store, conn, report)),
            ("derived rows", lambda: _orphans(conn, set(journals), set(logs), report)),
            ("alembic_version", lambda: _revision(conn, report)),
            ("pseudonyms", lambda: _pseudonyms(conn, report)),
        ]
        if listed:  # rows of a chain that could not be listed are not strays
            planned = [label for label, _, _ in plan]
            last_checks.append(("chain_heads", lambda: _stray_heads(store, planned, ctx, report)))
        else:
            del last_checks[1]
        report.on_entries = None
        if progress and entries:
            progress(entries, entries)
        for what, last_check in last_checks:
            try:
                last_check()
            except UNREADABLE as error:
                report.problem(f"{what}: {_unreadable(error)}")
        try:
            ahead = store_time.journals_ahead(conn, to_micros(store.now()))
        except UNREADABLE:
            ahead = []  # a journal that cannot be read is reported above
        report.warnings.extend(behind.sentence() for behind in ahead)
    if against_checkpoint:
        _checkpoint(store, anchored, heads, report)
    return report


def _context(conn: Connection, anchored: Before, report: VerifyFindings) -> _Context:
    """The signed heads, and the lengths the checkpoint saw (none when it is unreadable)."""
    try:
        signed = signed_heads.read_all(conn)
    except UNREADABLE as error:
        report.problem(f"chain_heads: {_unreadable(error)}")
        signed = {}
    seen = anchored.checkpoint.chains if anchored.checkpoint is not None else {}
    return _Context(signed, {hidden: length for hidden, (length, _) in seen.items()})


def _entry_count(conn: Connection) -> int:
    """Entries in every chain, for progress by entry; 0 when they cannot be counted (the
    walk names the damage; progress then goes chain by chain)."""
    tables = (schema.journal, schema.conversation_log, schema.ledger, schema.erasures)
    try:
        return sum(
            int(conn.execute(select(func.count()).select_from(t)).scalar_one()) for t in tables
        )
    except UNREADABLE:
        return 0


def _within_chains(
    report: VerifyFindings, total: int, progress: Progress | None, cancelled: Cancelled | None
) -> Callable[[], None] | None:
    """What the walk calls every CHECK_EVERY entries: progress by entry, and Cancel."""
    if not total and cancelled is None:
        return None

    def on_entries() -> None:
        if progress and total:
            progress(min(report.entries, total), total)
        if cancelled and cancelled():
            raise _Stopped

    return on_entries


def _pseudonyms(conn: Connection, report: VerifyFindings) -> None:
    for problem in unexplained_pseudonyms(conn):
        report.problem(problem)


def _checkpoint(
    store: Store,
    before: Before,
    heads: dict[str, tuple[int, dict[int, bytes]]],
    report: VerifyFindings,
) -> None:
    try:
        problems = check_checkpoint(store, before, heads, report.warnings, may_advance=report.ok)
    except UnreadableData as error:
        # The walk above has named the damaged chain (an erasure record that is not UTF-8,
        # say); the comparison needs those rows too, so it is a problem, not a stop.
        report.problem(
            f"checkpoint: not compared with the store, as reading it stopped at damage "
            f"({error.detail})"
        )
        return
    for problem in problems:
        report.problem(problem)
    if copy_without_checkpoint(before):
        report.no_checkpoint_here = True
        report.warnings.append(no_checkpoint_sentence(report.ok, store.read_only))


REANCHOR_COMMAND = "run 'engram checkpoint reanchor'"


def no_checkpoint_sentence(intact: bool, read_only: bool, remedy: str = REANCHOR_COMMAND) -> str:
    """What verify says of a copy without its checkpoint: its chains are checked, but
    whether it is the newest copy of the store cannot be, until someone vouches for it
    (`remedy`: how, in the face that says it)."""
    start = "chains intact; this copy" if intact else "this copy"
    then = (
        "it cannot be re-anchored where it cannot be written"
        if read_only
        else f"if it is the copy you meant to open, {remedy} to check it from now on"
    )
    return (
        f"{start} has no checkpoint here, so whether an older copy was put in its place "
        f"cannot be checked; {then}"
    )
