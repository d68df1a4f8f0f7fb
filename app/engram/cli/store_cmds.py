"""Store-wide commands: init, demo, verify, persons, export, audit, person erase."""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Iterable
from typing import Any

from engram.cli import no_display
from engram.cli.argument_help import PERSON
from engram.cli.context import CommandContext
from engram.cli.output import (
    add_json_flag,
    emit_error,
    emit_json,
    emit_json_items,
    emit_line,
    emit_table,
    emit_warning,
)
from engram.cli.progress import progress_bar
from engram.control import audit_log, demo, erase, forensics, persons, reanchor
from engram.control.private_file import NOT_ENCRYPTED
from engram.control.review_copy import review_copy_info
from engram.control.wording import counted
from engram.model.errors import InvalidInput
from engram.runtime import transcript_import
from engram.store.location import describe, store_url
from engram.store.store import Store


def register(commands: Any) -> None:
    """Add the store-wide commands."""
    p = commands.add_parser("init", help="create a new store")
    p.add_argument(
        "--no-keyring",
        action="store_true",
        help="keep the key only behind the passphrase, not in the OS keyring",
    )
    p.add_argument(
        "--weak-passphrase",
        action="store_true",
        help="accept a passphrase below the strength the inspector requires (zxcvbn score 3 "
        "of 4), for sample data and tests",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_init)

    p = commands.add_parser(
        "demo",
        help="build a realistic demo store through the real runtime (default: demo.engram in "
        "the user data folder, never the default store; passphrase 'demo' unless one is given)",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_demo)

    p = commands.add_parser("verify", help="check every chain, signature and the checkpoint")
    add_json_flag(p)
    p.set_defaults(handler=cmd_verify)

    p = commands.add_parser("persons", help="list the people in the store")
    add_json_flag(p)
    p.set_defaults(handler=cmd_persons)

    p = commands.add_parser(
        "export",
        help="everything kept about a person, as JSON, recorded in their audit log",
    )
    p.add_argument("--person", required=True, help=PERSON)
    p.add_argument(
        "--output",
        metavar="FILE",
        help="write it to FILE, readable by you only (it is not encrypted), whole or not at "
        "all; default: standard output, where an export that fails part-way stops short "
        "and exits 1",
    )
    p.set_defaults(handler=cmd_export)

    p = commands.add_parser(
        "audit", help="a person's journal as a readable log, filtered, streamed as it is read"
    )
    p.add_argument("--person", required=True, help=PERSON)
    p.add_argument(
        "--limit", type=int, help="show only this many of the newest entries (default: all)"
    )
    p.add_argument(
        "--actor",
        action="append",
        default=[],
        dest="actor_filter",
        metavar="ACTOR",
        help="only entries by this actor id (e.g. staff:dana, extractor); repeat for several "
        "(who is acting goes before the command: engram --actor ID audit …)",
    )
    p.add_argument(
        "--action",
        action="append",
        default=[],
        metavar="TYPE",
        help="only entries of this type (e.g. deleted, candidate_reviewed); repeat for several",
    )
    p.add_argument(
        "--since", metavar="DATE|ISO-TIME", help="only entries from then on (a date: its start)"
    )
    p.add_argument(
        "--until", metavar="DATE|ISO-TIME", help="only entries up to then (a date: its end)"
    )
    p.add_argument("--note", metavar="NOTE", help="only entries about this note")
    p.add_argument(
        "--search", metavar="WORDS", help="only entries whose words hold all of these words"
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_audit)

    p = commands.add_parser("import", help="import conversations from a JSONL transcript")
    p.add_argument("file", help="one JSON object per line (see the README)")
    add_json_flag(p)
    p.set_defaults(handler=cmd_import)

    person = commands.add_parser("person", help="act on a whole person")
    person_commands = person.add_subparsers(dest="person_command", metavar="ACTION")
    person_commands.required = True
    p = person_commands.add_parser("erase", help="erase everything kept about a person")
    p.add_argument("person", help=PERSON)
    p.add_argument("--confirm", required=True, help="repeat the person's id to confirm")
    p.add_argument(
        "--wait",
        type=float,
        default=erase.DEFAULT_WAIT_S,
        metavar="SECONDS",
        help="how long to wait for other programs reading the store to let go "
        f"(default {erase.DEFAULT_WAIT_S:g})",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_erase)

    checkpoint = commands.add_parser(
        "checkpoint", help="the signed checkpoint that catches an older copy put back"
    )
    checkpoint_commands = checkpoint.add_subparsers(dest="checkpoint_command", metavar="ACTION")
    checkpoint_commands.required = True
    p = checkpoint_commands.add_parser("status", help="where it is and what its anchors saw")
    add_json_flag(p)
    p.set_defaults(handler=cmd_checkpoint_status)
    p = checkpoint_commands.add_parser(
        "reanchor",
        help="after moving or restoring the store on purpose: vouch for it as it is now "
        "(recorded in the store's signed record)",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_reanchor)


def cmd_init(ctx: CommandContext) -> int:
    # On a terminal with no passphrase given, it is asked twice; without either, the key
    # lives in the OS keyring only (Store.create refuses where there is none).
    passphrase = ctx.new_passphrase(
        ctx.passphrase(),
        nothing="nothing was created",
        allow_weak=ctx.args.weak_passphrase,
        terminal_required=False,
    )
    store = Store.create(ctx.args.store, passphrase=passphrase, use_keyring=not ctx.args.no_keyring)
    try:
        where = {
            "store": describe(store.url),
            "id": store.info.id,
            "keyring": store.info.keyring_backend is not None,
            "passphrase": store.info.kek_by_passphrase is not None,
        }
    finally:
        store.close()
    if ctx.as_json:
        emit_json(where)
    else:
        keys = " and ".join(
            k
            for k, on in (
                ("the OS keyring", where["keyring"]),
                ("a passphrase", where["passphrase"]),
            )
            if on
        )
        emit_line(f"Created store {where['id']} at {where['store']} (key kept in {keys}).")
    return 0


def cmd_demo(ctx: CommandContext) -> int:
    # Never the default store (real data goes there): demo.engram beside it, unless
    # --store says otherwise; its passphrase is the public 'demo' unless one is given.
    location = ctx.args.store or str(demo.default_demo_path())
    given = ctx.passphrase()
    summary = demo.build_demo(location, passphrase=demo.DEMO_PASSPHRASE if given is None else given)
    where = describe(store_url(location))
    if ctx.as_json:
        emit_json({"store": where, **summary})
    else:
        said = (
            f"its passphrase is '{demo.DEMO_PASSPHRASE}'"
            if given is None
            else "with your passphrase"
        )
        emit_line(f"Built the demo store at {where} ({said}):")
        for person, counts in summary["persons"].items():
            emit_line(
                f"  {person}: {counted(counts['notes'], 'note')}, "
                f"{counted(counts['conversations'], 'conversation')}"
            )
        emit_line(f"Open it with: engram desk {where}")
    return 0


def cmd_verify(ctx: CommandContext) -> int:
    store = ctx.store()
    with progress_bar(ctx, "Verifying chains") as progress:
        report = forensics.verify_store(store, progress)
    if ctx.as_json:
        emit_json(report.to_json())
    else:
        emit_line(report.sentence())
        _say_if_review_copy(ctx)
        if store.read_only:
            emit_line("  opened read-only: its file or the folder it is in cannot be written")
        for problem in report.problems:
            emit_line(f"  problem: {problem}")
        for warning in report.warnings:
            emit_line(f"  warning: {warning}")
        if report.advice:
            emit_line(report.advice)
    return 0 if report.ok else 3


def cmd_persons(ctx: CommandContext) -> int:
    people = persons.list_persons(ctx.store())
    if ctx.as_json:
        emit_json([p.to_json() for p in people])
    else:
        emit_table(
            ["person", "active notes", "all notes", "conversations"],
            [(p.id, p.active_notes, p.all_notes, p.conversations) for p in people],
        )
        _say_if_review_copy(ctx)
    return 0


def _say_if_review_copy(ctx: CommandContext) -> None:
    """A review copy says so plainly wherever a store is looked over (issue 21 item 3)."""
    info = review_copy_info(ctx.store())
    if info is not None:
        emit_line(f"  review copy: {info.sentence()}")


def cmd_export(ctx: CommandContext) -> int:
    session = ctx.session(ctx.args.person)
    if ctx.args.output is None:
        forensics.export_to(session, sys.stdout)
        return 0
    with progress_bar(ctx, "Exporting conversations") as progress:
        written = forensics.write_export(session, ctx.args.output, progress)
    emit_warning(
        f"Everything kept about {session.person} was written to {written}. {NOT_ENCRYPTED}"
    )
    return 0


def cmd_audit(ctx: CommandContext) -> int:
    args = ctx.args
    narrowed = any((args.actor_filter, args.action, args.since, args.until, args.note, args.search))
    session = ctx.session(args.person)
    if args.limit is not None and not narrowed:  # the newest entries, as before
        rows: Iterable[dict[str, Any]] = forensics.audit_log(session, limit=args.limit)
    else:
        chosen = audit_log.AuditFilter(
            actors=tuple(args.actor_filter),
            actions=tuple(args.action),
            since=audit_log.day_start(args.since) if args.since else None,
            until=audit_log.day_end(args.until) if args.until else None,
            note=args.note,
            words=args.search or "",
        )
        if args.limit is not None:  # the newest of what the filter lists
            rows = deque(audit_log.stream(session, chosen), maxlen=max(0, args.limit))
        else:
            rows = audit_log.stream(session, chosen)
    if ctx.as_json:
        emit_json_items(rows)  # a page at a time: a million entries are never held at once
    else:
        emit_line("  ".join(("seq", "at", "actor", "action")))
        for r in rows:
            emit_line(f"{r['seq']}  {r['at']}  {r['actor']}  {r['action']}")
    return 0


def cmd_erase(ctx: CommandContext) -> int:
    if not 0 <= ctx.args.wait <= 3600:
        raise InvalidInput("--wait takes a number of seconds between 0 and 3600.")
    session = ctx.session(ctx.args.person)
    with progress_bar(ctx, "Scanning the raw files") as progress:
        report = erase.erase_person(session, ctx.args.confirm, progress, wait_s=ctx.args.wait)
    if ctx.as_json:
        emit_json(report.to_json())
    else:
        scan = report.raw_file_scan
        emit_line(
            f"Erased {report.person}: {counted(len(report.keys_destroyed), 'key')} "
            f"destroyed, {counted(sum(report.rows_deleted.values()), 'row')} deleted."
        )
        if scan.scanned:
            emit_line(
                f"Raw file scan of {', '.join(scan.scanned)}: "
                f"{counted(scan.found, 'trace')} of erased ciphertext found."
            )
            emit_line(f"How it was checked: {report.how_checked()}.")
        else:
            emit_line(f"No raw file to scan: {scan.note or 'not a file store'}.")
        emit_line(report.sentence())
        if report.advice:
            emit_line(report.advice)
    # Committed, but a promise that did not hold is never an exit 0 (as verify's 3).
    return 0 if report.held else 3


def cmd_checkpoint_status(ctx: CommandContext) -> int:
    state = reanchor.checkpoint_status(ctx.store())
    if ctx.as_json:
        emit_json(state)
    else:
        number = f" (number {state['serial']}, {state['chains']} chains)" if state["serial"] else ""
        emit_line(f"Checkpoint {state['state']} at {state['path']}{number}.")
        for place, serial in state["anchors"].items():
            emit_line(f"  anchor in {place.replace('_', ' ')}: {serial or 'none'}")
        for done in state["reanchored"]:
            emit_line(f"  re-anchored {done['at']} by {done['actor']} (was {done['previous']})")
    return 0


def cmd_reanchor(ctx: CommandContext) -> int:
    done = reanchor.reanchor(ctx.store(), ctx.args.actor or "operator")
    if ctx.as_json:
        emit_json(done)
    else:
        emit_line(
            f"Re-anchored: a new checkpoint (number {done['serial']}, {done['chains']} chains) "
            f"replaces the {done['previous']} one, recorded as entry {done['record']} of the "
            "store's signed record."
        )
    return 0


# engram-inspector-headless (packaging/headless_wheel.py) leaves Qt out (issue 20 item 11).
NO_QT = (
    "The desktop window needs Qt, which this install leaves out (engram-inspector-headless, "
    "for servers): install engram-inspector for the window; the other commands work as they are."
)


def register_desk(commands: Any) -> None:
    """Add `desk`."""
    p = commands.add_parser("desk", help="open the desktop inspector")
    p.add_argument("desk_store", nargs="?", metavar="STORE", help="the store to open")
    p.add_argument("--person", help="open this person's notes first")
    entry = p.add_mutually_exclusive_group()
    entry.add_argument(
        "--install-desktop-entry",
        action="store_true",
        help="add Engram Inspector to the desktop menu and .engram files to the file manager "
        "(desktop entry, icons, MIME type, metainfo in $XDG_DATA_HOME or ~/.local/share), "
        "then exit",
    )
    entry.add_argument(
        "--uninstall-desktop-entry",
        action="store_true",
        help="remove what --install-desktop-entry added, then exit",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_desk)


def _desktop_entry(ctx: CommandContext) -> int:
    from engram.cli import desktop_entry

    installing = bool(ctx.args.install_desktop_entry)
    done = desktop_entry.install() if installing else desktop_entry.uninstall()
    if ctx.as_json:
        emit_json(done.as_json("installed" if installing else "removed"))
        return 0
    if installing:
        emit_line(f"Installed the desktop entry for {done.command}:")
    else:
        emit_line("Removed the desktop entry:" if done.files else "No desktop entry was installed.")
    for path in done.files:
        emit_line(f"  {path}")
    if done.updated:
        emit_line("Updated the desktop's caches with " + " and ".join(done.updated) + ".")
    return 0


def cmd_desk(ctx: CommandContext) -> int:
    if ctx.args.install_desktop_entry or ctx.args.uninstall_desktop_entry:
        return _desktop_entry(ctx)
    try:
        from engram.gui.app import run  # Qt loads only for the inspector (no display needed)
    except ModuleNotFoundError as missing:
        if (missing.name or "").partition(".")[0] not in ("PySide6", "shiboken6"):
            raise
        raise InvalidInput(NO_QT) from None

    store = ctx.args.desk_store or ctx.args.store or os.environ.get("ENGRAM_STORE")
    if not store:
        from engram.store.location import default_store_path

        store = str(default_store_path())
    if not no_display.has_display():  # before any passphrase is asked for
        emit_error(no_display.message(ctx.args, store), ctx.as_json)
        return no_display.EXIT_NO_DISPLAY
    return run(store, ctx.passphrase(), ctx.args.actor, ctx.args.person)


def cmd_import(ctx: CommandContext) -> int:
    try:
        with open(ctx.args.file, encoding="utf-8", newline="") as handle:
            lines = transcript_import.split_lines(handle.read())
    except OSError as error:
        raise InvalidInput(f"Cannot read {ctx.args.file}: {error.strerror}.") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{ctx.args.file} is not UTF-8 text; nothing was imported.") from None
    store = ctx.store()
    with progress_bar(ctx, "Importing conversations") as progress:
        created = transcript_import.import_transcript(store, lines, progress)
    if ctx.as_json:
        emit_json({"conversations": created})
    else:
        emit_line(
            f"Imported {len(created)} conversation{'s' if len(created) != 1 else ''}: "
            + ", ".join(created)
        )
    return 0
