"""Store-wide commands: init, demo, verify, persons, export, audit, person erase."""

from __future__ import annotations

import sys
from typing import Any

from engram.cli.argument_help import PERSON
from engram.cli.context import CommandContext
from engram.cli.output import add_json_flag, emit_json, emit_line, emit_table, emit_warning
from engram.cli.progress import progress_bar
from engram.control import demo, erase, forensics, persons, reanchor
from engram.control.private_file import NOT_ENCRYPTED
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
    add_json_flag(p)
    p.set_defaults(handler=cmd_init)

    p = commands.add_parser("demo", help="build a realistic demo store through the real runtime")
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

    p = commands.add_parser("audit", help="a person's journal as a readable log")
    p.add_argument("--person", required=True, help=PERSON)
    p.add_argument(
        "--limit", type=int, help="show only this many of the newest entries (default: all)"
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
    store = Store.create(
        ctx.args.store, passphrase=ctx.passphrase(), use_keyring=not ctx.args.no_keyring
    )
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
    summary = demo.build_demo(ctx.args.store, passphrase=ctx.passphrase())
    if ctx.as_json:
        emit_json(summary)
    else:
        emit_line(f"Built the demo store at {describe(store_url(ctx.args.store))}:")
        for person, counts in summary["persons"].items():
            emit_line(
                f"  {person}: {counts['notes']} notes, {counts['conversations']} conversations"
            )
    return 0


def cmd_verify(ctx: CommandContext) -> int:
    store = ctx.store()
    with progress_bar(ctx, "Verifying chains") as progress:
        report = forensics.verify_store(store, progress)
    if ctx.as_json:
        emit_json(report.to_json())
    else:
        emit_line(report.sentence())
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
    return 0


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
    rows = forensics.audit_log(ctx.session(ctx.args.person), limit=ctx.args.limit)
    if ctx.as_json:
        emit_json(rows)
    else:
        emit_table(
            ["seq", "at", "actor", "action"],
            [(r["seq"], r["at"], r["actor"], r["action"]) for r in rows],
        )
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
        from engram.gui.app import run  # Qt loads only for the inspector
    except ModuleNotFoundError as missing:
        if (missing.name or "").partition(".")[0] not in ("PySide6", "shiboken6"):
            raise
        raise InvalidInput(NO_QT) from None

    store = ctx.args.desk_store or ctx.args.store
    if store is None:
        from engram.store.location import default_store_path

        store = str(default_store_path())
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
