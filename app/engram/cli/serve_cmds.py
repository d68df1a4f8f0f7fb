"""`engram serve` and `engram keys …`: the HTTP face and the keys its callers present."""

from __future__ import annotations

import io
import os
import sys
from typing import Any

from engram.cli.context import CommandContext
from engram.cli.output import add_json_flag, emit_json, emit_line, emit_table
from engram.model.errors import InvalidInput
from engram.runtime import api_keys


def register(commands: Any) -> None:
    """Add `serve` and `keys`."""
    p = commands.add_parser("serve", help="the typed memory API over HTTP (loopback by default)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.set_defaults(handler=cmd_serve)

    group = commands.add_parser("keys", help="project API keys for `engram serve`")
    actions = group.add_subparsers(dest="keys_command", metavar="ACTION")
    actions.required = True
    p = actions.add_parser("create", help="a new key, printed once")
    p.add_argument("--label", required=True)
    add_json_flag(p)
    p.set_defaults(handler=cmd_keys_create)
    p = actions.add_parser("list", help="every key (never the key itself)")
    add_json_flag(p)
    p.set_defaults(handler=cmd_keys_list)
    p = actions.add_parser("revoke", help="stop a key working at once")
    p.add_argument("id")
    add_json_flag(p)
    p.set_defaults(handler=cmd_keys_revoke)


def cmd_serve(ctx: CommandContext) -> int:
    from engram.api.server import LOOPBACK, make_server  # the HTTP face loads only here

    server = make_server(ctx.store(), ctx.args.host, ctx.args.port)
    host, port = str(server.server_address[0]), int(server.server_address[1])
    if ctx.args.host not in LOOPBACK:
        print(
            f"engram: listening on {host} — other machines can reach this API; put TLS and "
            "a firewall in front of it.",
            file=sys.stderr,
        )
    emit_line(f"Serving the memory API on http://{host}:{port}/v1 (Ctrl+C stops).")
    sys.stdout.flush()  # a supervisor reading our output learns the port now
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


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
    p = commands.add_parser("mcp", help="the agent's tools over stdio for an MCP client")
    p.add_argument("--person", default=os.environ.get("ENGRAM_PERSON"))
    p.add_argument("--conversation", default=os.environ.get("ENGRAM_CONVERSATION"))
    p.add_argument("--agent", help="whose memory settings apply (default: the conversation's)")
    p.add_argument(
        "--allow-tools",
        metavar="NAMES",
        help="the host's ceiling for memory tools, comma-separated (default: all four)",
    )
    p.set_defaults(handler=cmd_mcp)


def cmd_mcp(ctx: CommandContext) -> int:
    from engram.mcp.server import bind, serve  # the MCP face loads only here

    if not ctx.args.person or not ctx.args.conversation:
        raise InvalidInput(
            "engram mcp serves one conversation: give --person and --conversation (or "
            "ENGRAM_PERSON and ENGRAM_CONVERSATION) from the host, never from the model."
        )
    allowed = ctx.args.allow_tools.split(",") if ctx.args.allow_tools else None
    bound = bind(ctx.store(), ctx.args.person, ctx.args.conversation, ctx.args.agent, allowed)
    # Bytes that are not UTF-8 become U+FFFD instead of ending the session.
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    serve(bound, stdin, sys.stdout)
    return 0
