"""`engram` entry point: the argument parser and the error boundary."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from engram import __version__
from engram.cli import (
    backup_cmds,
    conversation_cmds,
    key_cmds,
    learning_cmds,
    mcp_cmds,
    note_cmds,
    report_cmds,
    review_cmds,
    serve_cmds,
    store_cmds,
)
from engram.cli.context import CommandContext
from engram.cli.output import emit_error, emit_warning
from engram.model.errors import EngramError
from engram.store.errors import DatabaseError, OperationalError, is_busy
from engram.store.location import store_url
from engram.store.storage_faults import escaped_fault

EXIT_ERROR = 1
BUSY_MESSAGE = (
    "The store is busy: another program kept writing to it for longer than Engram waits, "
    "so nothing was written; try again once it is done."
)
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # One plain sentence, like every other error, instead of argparse's usage dump.
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see '{self.prog} --help').\n")


def _add_globals(parser: argparse.ArgumentParser, default: object = None) -> None:
    """The options every command takes, before or after the command's name."""
    parser.add_argument(
        "--store",
        default=default,
        help="store path or SQLAlchemy URL (default: ENGRAM_STORE or the user data folder)",
    )
    parser.add_argument(
        "--passphrase-env",
        metavar="VAR",
        default=default,
        help="read the store passphrase from this environment variable instead of the keyring",
    )
    parser.add_argument(
        "--passphrase-file",
        metavar="FILE",
        default=default,
        help="read the store passphrase from the first line of this file (for scripts)",
    )
    parser.add_argument(
        "--passphrase-fd",
        metavar="N",
        type=int,
        default=default,
        help="read the store passphrase from the first line of this open file descriptor",
    )
    parser.add_argument(
        "--actor",
        default=default,
        help="who is acting, recorded on every change (e.g. staff:dana); default: "
        "the person themself",
    )


def _globals_after_commands(parser: argparse.ArgumentParser) -> None:
    """Let `engram mcp --store S` mean `engram --store S mcp`: hosts write options after
    the command (issue 10). An option given after the command wins over one before it,
    unless the command gives the option a meaning of its own (`audit --actor` filters)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                own = argparse.ArgumentParser(add_help=False)
                _add_globals(own, argparse.SUPPRESS)
                for option in own._actions:
                    if not set(option.option_strings) & set(sub._option_string_actions):
                        sub._add_action(option)
                _globals_after_commands(sub)


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree (the CLI contract in DESIGN.md)."""
    parser = _Parser(
        prog="engram",
        description="See and control what an AI agent remembers about a person.",
    )
    parser.add_argument("--version", action="version", version=f"engram {__version__}")
    _add_globals(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    store_cmds.register(commands)
    store_cmds.register_desk(commands)
    backup_cmds.register(commands)
    note_cmds.register(commands)
    conversation_cmds.register(commands)
    learning_cmds.register(commands)
    serve_cmds.register(commands)
    mcp_cmds.register(commands)
    report_cmds.register(commands)
    review_cmds.register(commands)
    key_cmds.register(commands)
    _globals_after_commands(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the process exit code."""
    logging.basicConfig(level=logging.ERROR, format="%(message)s")
    parser = build_parser()
    args = parser.parse_args(argv)
    context = CommandContext(args)
    try:
        return int(args.handler(context) or 0)
    except EngramError as error:
        emit_error(error.for_command_line(), context.as_json)
        return EXIT_ERROR
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly, like other Unix tools.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 0
    except (OSError, DatabaseError) as error:
        if isinstance(error, OperationalError) and is_busy(error):
            # Another program held the write lock past the busy timeout; the write rolled back.
            emit_error(BUSY_MESSAGE, context.as_json)
            return EXIT_ERROR
        # A full disk or a server gone that no layer below named: still one true sentence.
        fault = escaped_fault(error, store_url(args.store))
        if fault is None:
            raise
        emit_error(fault.for_command_line(), context.as_json)
        return EXIT_ERROR
    except KeyboardInterrupt:
        emit_error("Interrupted; nothing half-written was kept.", context.as_json)
        return 130
    finally:
        for warning in context.warnings():
            emit_warning(f"warning: {warning.rstrip('.')}.")
        context.close()


def run() -> None:
    """Console-script wrapper."""
    sys.exit(main())


if __name__ == "__main__":
    run()
