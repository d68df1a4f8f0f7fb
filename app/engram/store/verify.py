"""`verify`: run the database's own page check, walk every chain (verify_chains.py: its
links against its signed head, its payload hashes, a journal's replay against its
projection, the ledger's against the tables outside the chains), check the data keys and
the rows no chain covers, and compare chain heads with the signed checkpoint (rollback).

Reports name the first bad entry of each chain; it never changes anything. Damage the
database reports while reading (a malformed page, text that is not UTF-8) becomes a
problem of the chain being read, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sqlalchemy import Connection, exc, func, select

from engram.model.clock import to_micros
from engram.model.errors import UnreadableData
from engram.store import (
    chain,
    ledger,
    migrate,
    schema,
    signed_heads,
    store_time,
)
from engram.store.checkpoint_check import (
    Before,
    check_checkpoint,
    copy_without_checkpoint,
    read_before,
)
from engram.store.data_keys import conversation_key_ref, person_key_ref
from engram.store.dialect import storage_check
from engram.store.erasure import unexplained_pseudonyms
from engram.store.store import Store
from engram.store.verify_chains import (
    UNREADABLE,
    ChainContext,
    Stopped,
    VerifyFindings,
    journal_names,
    log_names,
    walk_erasures,
    walk_journal,
    walk_ledger,
    walk_log,
)

Progress = Callable[[int, int], None]
Cancelled = Callable[[], bool]


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


def _stray_heads(
    store: Store, planned: Iterable[str], ctx: ChainContext, report: VerifyFindings
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
        journals = _names(journal_names, conn, "journals", report)
        logs = _names(log_names, conn, "conversation logs", report)
        listed = len(report.problems) == before
        ctx = _context(conn, anchored, report)
        entries = _entry_count(conn) if progress or cancelled else 0
        report.on_entries = _within_chains(report, entries, progress, cancelled)
        plan = [
            *((chain.journal_chain(name), name, walk_journal) for name in journals),
            *((chain.log_chain(name), name, walk_log) for name in logs),
            (ledger.CHAIN, ledger.CHAIN, walk_ledger),
            (chain.ERASURE_CHAIN, chain.ERASURE_CHAIN, walk_erasures),
        ]
        for done, (label, name, check) in enumerate(plan, start=1):
            try:
                walked = check(store, conn, name, report, ctx)
            except Stopped:
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


def _context(conn: Connection, anchored: Before, report: VerifyFindings) -> ChainContext:
    """The signed heads, and the lengths the checkpoint saw (none when it is unreadable)."""
    try:
        signed = signed_heads.read_all(conn)
    except UNREADABLE as error:
        report.problem(f"chain_heads: {_unreadable(error)}")
        signed = {}
    seen = anchored.checkpoint.chains if anchored.checkpoint is not None else {}
    return ChainContext(signed, {hidden: length for hidden, (length, _) in seen.items()})


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
            raise Stopped

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
