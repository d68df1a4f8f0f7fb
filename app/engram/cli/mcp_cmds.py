"""`engram mcp` (the MCP face) and `engram mcp config` (a desktop host set up in one
command)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from engram.cli import mcp_hosts
from engram.cli.context import CommandContext
from engram.cli.output import add_json_flag, emit_json, emit_line
from engram.cli.serve_cmds import add_listen_options, listen_options
from engram.control import persons
from engram.control.session import PersonSession
from engram.model.errors import InvalidInput, NotFound
from engram.store.location import store_url


def register(commands: Any) -> None:
    """Add `mcp` and `mcp config`."""
    p = commands.add_parser(
        "mcp", help="the agent's tools for an MCP client (stdio, or Streamable HTTP)"
    )
    p.add_argument(
        "--person",
        help="whom the agent answers, set by the host (default: ENGRAM_PERSON)",
    )
    p.add_argument(
        "--conversation",
        help="the conversation the tools serve, set by the host (default: ENGRAM_CONVERSATION; "
        "without one, the session starts its own the first time a call needs it)",
    )
    p.add_argument(
        "--agent",
        help="whose memory settings apply (default: the conversation's; without a "
        "conversation, none, so every memory tool is off)",
    )
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
    actions = p.add_subparsers(dest="mcp_command", metavar="ACTION", parser_class=type(p))
    actions.required = False  # `engram mcp` alone serves
    config = actions.add_parser(
        "config", help="print (or write) a desktop host's configuration for `engram mcp`"
    )
    config.add_argument(
        "--host",
        dest="mcp_host",
        metavar="HOST",
        required=True,
        choices=mcp_hosts.HOSTS,
        help="the host that starts the server",
    )
    # SUPPRESS: `engram mcp --person P config …` keeps the P given before `config`.
    config.add_argument(
        "--person",
        default=argparse.SUPPRESS,
        help="whose memory the host serves, required (created in the store if it is new)",
    )
    config.add_argument(
        "--agent", default=argparse.SUPPRESS, help="whose memory settings apply (optional)"
    )
    config.add_argument(
        "--allow-tools",
        metavar="NAMES",
        default=argparse.SUPPRESS,
        help="the host's ceiling for memory tools, comma-separated (optional)",
    )
    config.add_argument(
        "--name", default="engram", help="the server's name in the host's configuration"
    )
    config.add_argument(
        "--write",
        action="store_true",
        help="merge it into the host's configuration file, after a backup of that file",
    )
    config.add_argument(
        "--file",
        metavar="PATH",
        help="the file --write merges into (default: the host's own for this user; a "
        "workspace's is .vscode/mcp.json or .cursor/mcp.json)",
    )
    add_json_flag(config)
    config.set_defaults(handler=cmd_mcp_config)


def cmd_mcp(ctx: CommandContext) -> int:
    """Serve the agent's tools until the host closes the connection."""
    import anyio

    from engram.mcp.server import bind, serve_http, serve_stdio  # the MCP face loads here
    from engram.runtime.usage_writer import UsageWriter

    # Read at run time, not as parser defaults, so the reference never shows a caller's ids.
    person = ctx.args.person or os.environ.get("ENGRAM_PERSON")
    conversation = ctx.args.conversation or os.environ.get("ENGRAM_CONVERSATION") or None
    if not person:
        raise InvalidInput(
            "engram mcp serves one person: give --person (or ENGRAM_PERSON) from the host, "
            "never from the model."
        )
    listen = listen_options(ctx) if ctx.args.transport == "http" else None
    allowed = ctx.args.allow_tools.split(",") if ctx.args.allow_tools else None
    store = ctx.store()
    usage = UsageWriter(store)  # reads answer at once; their usage is written after (W6)
    try:
        bound = bind(store, person, conversation, ctx.args.agent, allowed, usage=usage)
        if listen is None:
            anyio.run(serve_stdio, bound)
            return 0
        return serve_http(bound, listen)
    finally:
        usage.close()  # what is pending is written before the process exits


def cmd_mcp_config(ctx: CommandContext) -> int:
    """Print, or merge into the host's file, the configuration that starts `engram mcp`."""
    args = ctx.args
    person = getattr(args, "person", None)
    if not person:
        raise InvalidInput(
            "Say whose memory the host serves with --person; it becomes the host's trusted "
            "identity, which no model can change."
        )
    store = mcp_hosts.store_argument(store_url(args.store))
    server = mcp_hosts.launch(
        store,
        person,
        getattr(args, "agent", None),
        getattr(args, "allow_tools", None),
        args.passphrase_env,
    )
    document = mcp_hosts.host_config(args.mcp_host, args.name, server)
    plan = None
    if args.write:
        target = (
            mcp_hosts.default_file(args.mcp_host)
            if args.file is None
            else Path(args.file).expanduser().absolute()
        )
        plan = mcp_hosts.plan_merge(target, document)  # a file it cannot merge into: stop here
    # The configuration must work as written: the store opens the way the host will open
    # it (keyring, or the named variable), and the person is there to be served.
    if _ensure_person(ctx, person):
        sys.stderr.write(f"{person} is new in this store: created them.\n")
    if plan is None:
        emit_json(document)
        return 0
    changed = plan.changed
    backup = mcp_hosts.write_merge(plan)
    if ctx.as_json:
        emit_json(
            {
                "file": str(plan.file),
                "backup": None if backup is None else str(backup),
                "server": args.name,
                "replaced": plan.replaced,
                "changed": changed,
                "config": document,
            }
        )
    elif not changed:
        emit_line(f"{plan.file} already starts this {args.name!r} server; nothing changed.")
    else:
        did = "Replaced" if plan.replaced else "Added"
        kept = f" (the old file is kept as {backup})" if backup else ""
        emit_line(f"{did} the {args.name!r} server in {plan.file}{kept}.")
    return 0


def _ensure_person(ctx: CommandContext, person: str) -> bool:
    store = ctx.store()
    try:
        PersonSession.open(store, person)
        return False
    except NotFound:
        persons.ensure_person(store, person, ctx.args.actor or person)
        return True
