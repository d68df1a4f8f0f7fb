"""The store's key: `passphrase change` and `keyring forget` (issue 20 item 7)."""

from __future__ import annotations

from typing import Any

from engram.cli.context import CommandContext, read_source
from engram.cli.output import add_json_flag, emit_json, emit_line


def register(commands: Any) -> None:
    """Add `passphrase change` and `keyring forget`."""
    group = commands.add_parser("passphrase", help="the passphrase that opens the store")
    actions = group.add_subparsers(dest="passphrase_command", metavar="ACTION")
    actions.required = True
    p = actions.add_parser(
        "change",
        help="seal the store's key under a new passphrase (asked twice on a terminal); the "
        "old one stops opening it, the data and any keyring entry stay as they are",
    )
    p.add_argument(
        "--new-passphrase-env", metavar="VAR", help="read the new passphrase from this variable"
    )
    p.add_argument(
        "--new-passphrase-file",
        metavar="FILE",
        help="read the new passphrase from the first line of this file",
    )
    p.add_argument(
        "--new-passphrase-fd",
        metavar="N",
        type=int,
        help="read the new passphrase from the first line of this open file descriptor",
    )
    p.add_argument(
        "--weak-passphrase",
        action="store_true",
        help="accept a passphrase below the strength the inspector requires (zxcvbn score 3 "
        "of 4), for sample data and tests",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_passphrase_change)

    group = commands.add_parser("keyring", help="the store's key in this computer's OS keyring")
    actions = group.add_subparsers(dest="keyring_command", metavar="ACTION")
    actions.required = True
    p = actions.add_parser(
        "forget",
        help="remove the store's key from this computer's OS keyring, so only the passphrase "
        "opens it (the passphrase is asked, or given, to prove it is known)",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_keyring_forget)


def cmd_passphrase_change(ctx: CommandContext) -> int:
    from engram.control import passphrase  # the store's modules load for this command only
    from engram.model.errors import ReadOnlyStore
    from engram.store.store import READ_ONLY_SENTENCE

    store = ctx.store()  # the current key first: the old passphrase or the keyring
    if store.read_only:  # said before a new passphrase is asked for
        raise ReadOnlyStore(READ_ONLY_SENTENCE)
    args = ctx.args
    given = read_source(
        args.new_passphrase_env, args.new_passphrase_file, args.new_passphrase_fd, "new-passphrase"
    )
    new = ctx.new_passphrase(
        given,
        nothing="nothing was changed",
        allow_weak=args.weak_passphrase,
        terminal_required=True,
    )
    assert new is not None  # terminal_required: refused above when there is none
    said = passphrase.change_passphrase(store, new, allow_weak=args.weak_passphrase)
    if ctx.as_json:
        emit_json({"store": ctx.where(), "id": store.info.id, "passphrase": "changed"})
    else:
        emit_line(said)
    return 0


def cmd_keyring_forget(ctx: CommandContext) -> int:
    from engram.control import passphrase

    store = ctx.store()
    said = passphrase.forget_key(store, ctx.confirming_passphrase())
    if ctx.as_json:
        emit_json({"store": ctx.where(), "id": store.info.id, "keyring": False})
    else:
        emit_line(said)
    return 0
