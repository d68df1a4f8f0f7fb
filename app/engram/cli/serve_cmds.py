"""`engram serve` and `engram keys …`: the HTTP face and the keys its callers present;
the listening options `engram mcp --transport http` shares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram.cli.context import CommandContext
from engram.cli.learning_cmds import add_extractor_options, chosen_extractor
from engram.cli.output import add_json_flag, emit_json, emit_line, emit_table
from engram.runtime import api_keys
from engram.runtime.extraction import HostPolicy

if TYPE_CHECKING:
    from engram.api.server import Listen


def register(commands: Any) -> None:
    """Add `serve` and `keys`."""
    p = commands.add_parser("serve", help="the typed memory API over HTTP (loopback by default)")
    add_listen_options(p, default_port=8765)
    add_extractor_options(p)
    p.add_argument(
        "--no-learning",
        action="store_true",
        help="learn nothing in the background, whatever the agents' settings say (the host's "
        "kill switch)",
    )
    p.set_defaults(handler=cmd_serve)

    group = commands.add_parser("keys", help="project API keys for `engram serve`")
    actions = group.add_subparsers(dest="keys_command", metavar="ACTION")
    actions.required = True
    p = actions.add_parser("create", help="a new key, printed once")
    p.add_argument(
        "--label",
        required=True,
        help="what the key is for, shown by `keys list` "
        f"(1 to {api_keys.MAX_LABEL_CHARS} characters)",
    )
    add_json_flag(p)
    p.set_defaults(handler=cmd_keys_create)
    p = actions.add_parser("list", help="every key (never the key itself)")
    add_json_flag(p)
    p.set_defaults(handler=cmd_keys_list)
    p = actions.add_parser("revoke", help="stop a key working at once")
    p.add_argument("id", help="the key's id (from `engram keys list`)")
    add_json_flag(p)
    p.set_defaults(handler=cmd_keys_revoke)


def cmd_serve(ctx: CommandContext) -> int:
    from engram.api.server import serve_memory_api  # the HTTP face loads only here

    listen = listen_options(ctx)
    extractor = chosen_extractor(ctx)
    host = HostPolicy(learning=not ctx.args.no_learning)
    return serve_memory_api(ctx.store(), listen, extractor, host)


def cmd_keys_create(ctx: CommandContext) -> int:
    key_id, key = api_keys.create_key(ctx.store(), ctx.args.label, ctx.args.actor or "operator")
    if ctx.as_json:
        emit_json({"id": key_id, "key": key})
    else:
        emit_line(f"{key_id}: {key}")
        emit_line("Keep the key now: it is not stored and cannot be shown again.")
    return 0


def cmd_keys_list(ctx: CommandContext) -> int:
    rows = api_keys.list_keys(ctx.store())
    if ctx.as_json:
        emit_json(rows)
        return 0
    emit_table(
        ["id", "label", "created", "by", "revoked"],
        [
            (r["id"], r["label"], r["created_at"], r["created_by"], r["revoked_at"] or "")
            for r in rows
        ],
    )
    return 0


def cmd_keys_revoke(ctx: CommandContext) -> int:
    api_keys.revoke_key(ctx.store(), ctx.args.id)
    if ctx.as_json:
        emit_json({"id": ctx.args.id, "revoked": True})
    else:
        emit_line(f"Key {ctx.args.id} revoked.")
    return 0


def add_listen_options(p: Any, default_port: int) -> None:
    """--host, --port and TLS, shared by `serve` and `mcp --transport http`."""
    p.add_argument("--host", default="127.0.0.1", help="loopback unless told otherwise")
    p.add_argument("--port", type=int, default=default_port, help="0 picks a free port")
    p.add_argument("--certfile", help="TLS certificate (PEM); needed to listen beyond loopback")
    p.add_argument("--keyfile", help="the certificate's private key (PEM)")
    p.add_argument(
        "--insecure-plain-http",
        action="store_true",
        help="listen beyond loopback without TLS (only behind a TLS-terminating proxy)",
    )


def listen_options(ctx: CommandContext) -> Listen:
    """The checked listening options."""
    from engram.api.server import Listen

    return Listen.checked(
        ctx.args.host,
        ctx.args.port,
        ctx.args.certfile,
        ctx.args.keyfile,
        ctx.args.insecure_plain_http,
    )
