"""`engram serve` and `engram keys …`: the HTTP face and the keys its callers present."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from engram.cli.context import CommandContext
from engram.cli.output import add_json_flag, emit_json, emit_line, emit_table
from engram.model.errors import InvalidInput
from engram.runtime import api_keys

if TYPE_CHECKING:
    from engram.api.server import Listen


def register(commands: Any) -> None:
    """Add `serve` and `keys`."""
    p = commands.add_parser("serve", help="the typed memory API over HTTP (loopback by default)")
    add_listen_options(p, default_port=8765)
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
    return serve_memory_api(ctx.store(), listen)


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


def register_mcp(commands: Any) -> None:
    """Add `mcp`."""
    p = commands.add_parser(
        "mcp", help="the agent's tools for an MCP client (stdio, or Streamable HTTP)"
    )
    p.add_argument(
        "--person",
        help="whom the agent answers, set by the host (default: ENGRAM_PERSON)",
    )
    p.add_argument(
        "--conversation",
        help="the conversation the tools serve, set by the host (default: ENGRAM_CONVERSATION)",
    )
    p.add_argument("--agent", help="whose memory settings apply (default: the conversation's)")
    p.add_argument(
        "--allow-tools",
        metavar="NAMES",
        help="the host's ceiling for memory tools, comma-separated (default: all four)",
    )
    p.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (default), or Streamable HTTP at /mcp behind a project API key",
    )
    add_listen_options(p, default_port=8766)
    p.set_defaults(handler=cmd_mcp)


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


def cmd_mcp(ctx: CommandContext) -> int:
    import anyio

    from engram.mcp.server import bind, serve_http, serve_stdio  # the MCP face loads here

    # Read at run time, not as parser defaults, so the reference never shows a caller's ids.
    person = ctx.args.person or os.environ.get("ENGRAM_PERSON")
    conversation = ctx.args.conversation or os.environ.get("ENGRAM_CONVERSATION")
    if not person or not conversation:
        raise InvalidInput(
            "engram mcp serves one conversation: give --person and --conversation (or "
            "ENGRAM_PERSON and ENGRAM_CONVERSATION) from the host, never from the model."
        )
    listen = listen_options(ctx) if ctx.args.transport == "http" else None
    allowed = ctx.args.allow_tools.split(",") if ctx.args.allow_tools else None
    bound = bind(ctx.store(), person, conversation, ctx.args.agent, allowed)
    if listen is None:
        anyio.run(serve_stdio, bound)
        return 0
    return serve_http(bound, listen)
