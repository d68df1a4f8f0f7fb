"""`engram backup` and `engram restore` (issue 21 item 1): thin over control/backup.py."""

from __future__ import annotations

import sys
from typing import Any

from engram.cli.context import TRIES, CommandContext, ask, on_terminal
from engram.cli.output import add_json_flag, emit_json, emit_line
from engram.control import backup
from engram.model.errors import NotAllowed, PassphraseNeeded, WrongPassphrase
from engram.store.dialect import is_sqlite
from engram.store.location import store_url


def register(commands: Any) -> None:
    """Add `backup` and `restore`."""
    p = commands.add_parser(
        "backup",
        help="write a consistent copy of the store and its checkpoint, readable by you only, "
        "while it stays in use",
    )
    p.add_argument("destination", metavar="DEST", help="the backup file to write")
    p.add_argument("--replace", action="store_true", help="replace a file already at DEST")
    add_json_flag(p)
    p.set_defaults(handler=cmd_backup)

    p = commands.add_parser(
        "restore",
        help="put a backup back as the store at --to, checked first and re-anchored "
        "(recorded in the store's signed record)",
    )
    p.add_argument("backup", metavar="BACKUP", help="a file written by 'engram backup'")
    p.add_argument("--to", required=True, metavar="STORE", help="where the store goes")
    p.add_argument(
        "--replace", action="store_true", help="replace the store already at STORE with the backup"
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_restore)


def cmd_backup(ctx: CommandContext) -> int:
    if not is_sqlite(store_url(ctx.args.store)):
        raise NotAllowed(backup.SERVER_BACKUP)  # said before connecting: nothing to open
    written = backup.backup_store(ctx.store(), ctx.args.destination, replace=ctx.args.replace)
    if ctx.as_json:
        emit_json(written.to_json())
    else:
        beside = f", with its checkpoint {written.checkpoint}" if written.checkpoint else ""
        emit_line(
            f"Backed up the store to {written.path}{beside} (readable by you only; it is "
            "encrypted as the store is, and opens with the same key)."
        )
    return 0


def _restore(ctx: CommandContext, passphrase: str | None) -> backup.Restored:
    return backup.restore_backup(
        ctx.args.backup,
        ctx.args.to,
        actor=ctx.args.actor or "operator",
        replace=ctx.args.replace,
        passphrase=passphrase,
    )


def _restore_typed(ctx: CommandContext) -> backup.Restored:
    """The backup's passphrase typed on a terminal, as every command asks for a store's."""
    for attempt in range(1, TRIES + 1):
        try:
            return _restore(ctx, ask(f"Passphrase for the backup {ctx.args.backup}: "))
        except WrongPassphrase:
            if attempt == TRIES:
                raise
            print("That passphrase does not open the backup; try again.", file=sys.stderr)
    raise AssertionError("unreachable")


def cmd_restore(ctx: CommandContext) -> int:
    given = ctx.passphrase()
    try:
        done = _restore(ctx, given)
    except PassphraseNeeded:  # no passphrase given and no key in the keyring
        if given is not None or not on_terminal():
            raise
        done = _restore_typed(ctx)
    if ctx.as_json:
        emit_json(done.to_json())
    else:
        how = "replaced the store at" if done.replaced else "restored it as"
        emit_line(
            f"Checked the backup and {how} {done.path}; re-anchored it (checkpoint number "
            f"{done.reanchored['serial']}, entry {done.reanchored['record']} of the store's "
            "signed record), so 'engram verify' accepts it."
        )
    return 0
