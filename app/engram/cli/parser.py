"""The argument parser: the whole command tree (the CLI contract in DESIGN.md).

Starting is cheap (issue 20 item 10): this module imports no command's code. Each command
stands in as its name and line of help, which is all `engram --help` shows, until the
command line names it; only then is the module that owns it imported to add its options
(`build_parser()` without `deferred` adds the whole tree at once, for the reference).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

from engram import __version__
from engram.cli.quick_help import columns

EXIT_USAGE = 2

# Each group of commands: the module and function that add them, and the one-line help of
# each top-level command they add, in the order `engram --help` lists them.
# tests/unit/test_issue20_startup.py checks these lines against what each function adds.
GROUPS: tuple[tuple[str, str, dict[str, str]], ...] = (
    (
        "store_cmds",
        "register",
        {
            "init": "create a new store",
            "demo": "build a realistic demo store through the real runtime (default: "
            "demo.engram in the user data folder, never the default store; passphrase 'demo' "
            "unless one is given)",
            "verify": "check every chain, signature and the checkpoint",
            "persons": "list the people in the store",
            "export": "everything kept about a person, as JSON, recorded in their audit log",
            "audit": "a person's journal as a readable log, filtered, streamed as it is read",
            "import": "import conversations from a JSONL transcript",
            "person": "act on a whole person",
            "checkpoint": "the signed checkpoint that catches an older copy put back",
        },
    ),
    ("store_cmds", "register_desk", {"desk": "open the desktop inspector"}),
    (
        "backup_cmds",
        "register",
        {
            "backup": "write a consistent copy of the store and its checkpoint, readable by "
            "you only, while it stays in use",
            "restore": "put a backup back as the store at --to, checked first and re-anchored "
            "(recorded in the store's signed record)",
        },
    ),
    ("note_cmds", "register", {"notes": "a person's notes"}),
    (
        "conversation_cmds",
        "register",
        {
            "conversation": "one conversation",
            "conversations": "a person's conversations",
            "assemble": "the memory block the agent's next turn here would get",
            "recall": "the notes the agent's recall tool would get here",
        },
    ),
    (
        "learning_cmds",
        "register",
        {
            "agents": "each agent's memory settings",
            "learn": "learn notes now from turns not analysed yet",
            "maintain": "retire expired notes, remove duplicates, rebuild each person's profile",
            "candidates": "review the notes learning suggested",
        },
    ),
    (
        "serve_cmds",
        "register",
        {
            "serve": "the typed memory API over HTTP (loopback by default)",
            "keys": "project API keys for `engram serve`",
        },
    ),
    (
        "mcp_cmds",
        "register",
        {"mcp": "the agent's tools for an MCP client (stdio, or Streamable HTTP)"},
    ),
    (
        "memory_cmds",
        "register",
        {
            "memories": "memories kept elsewhere (another assistant's list, mem0's export), "
            "as candidates"
        },
    ),
    (
        "review_cmds",
        "register",
        {"review": "a review copy of one person, for an offline reviewer, and its return"},
    ),
    (
        "key_cmds",
        "register",
        {
            "passphrase": "the passphrase that opens the store",
            "keyring": "the store's key in this computer's OS keyring",
        },
    ),
    (
        "report_cmds",
        "register",
        {
            "report": "a person's access report: a signed PDF of everything kept about them, "
            "recorded in their audit log",
            "verify-report": "say whether an access report came from this store unaltered "
            "(exit 0 only then)",
        },
    ),
)


class _Parser(argparse.ArgumentParser):
    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse's own formatter and width (2 columns spare), found as shutil finds it
        # without importing shutil and the compression modules it brings (about 2 ms)
        return self.formatter_class(prog=self.prog, width=columns() - 2)  # type: ignore[call-arg]

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


def _add_globals_after(sub: argparse.ArgumentParser) -> None:
    """The options every command takes, added to a command after its name, except those
    the command gives a meaning of its own (`audit --actor` filters by actor)."""
    own = argparse.ArgumentParser(add_help=False)
    _add_globals(own, argparse.SUPPRESS)
    for option in own._actions:
        if not set(option.option_strings) & set(sub._option_string_actions):
            sub._add_action(option)


def _globals_after_commands(parser: argparse.ArgumentParser) -> None:
    """Let `engram mcp --store S` mean `engram --store S mcp`: hosts write options after
    the command (issue 10). An option given after the command wins over one before it,
    unless the command gives the option a meaning of its own."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):  # set(): aliases share a parser
                if not isinstance(sub, _Deferred):  # that one adds them once it is built
                    _add_globals_after(sub)
                    _globals_after_commands(sub)


class _Deferred(_Parser):
    """A command whose group is added only when the command line names it (issue 20 item
    10): until then it is its name and line of help, which is all `engram --help` shows.

    ArgumentParser.__init__ is not called on purpose: building the two dozen stand-ins
    in full was most of what `engram --help` cost. Parsing builds the real parser first.
    """

    def __init__(self, prog: str, name: str, module: str, function: str) -> None:
        self.prog = prog
        self._command = (name, module, function)

    def _real(self) -> argparse.ArgumentParser:
        name, module, function = self._command
        # The group adds its commands to a tree of its own, whose prefix is ours ("engram").
        scratch = _Parser(prog=self.prog.rsplit(" ", 1)[0], add_help=False)
        commands = scratch.add_subparsers(parser_class=_Parser)
        getattr(importlib.import_module(f"engram.cli.{module}"), function)(commands)
        real: argparse.ArgumentParser = commands.choices[name]
        _add_globals_after(real)
        _globals_after_commands(real)
        return real

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        return self._real().parse_known_args(args, namespace)


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """The subcommands' action, which can also hold a command by name until it is named."""

    def add_deferred(self, name: str, text: str, module: str, function: str) -> None:
        self._choices_actions.append(self._ChoicesPseudoAction(name, (), text))
        self._name_parser_map[name] = _Deferred(
            f"{self._prog_prefix} {name}", name, module, function
        )


def build_parser(*, deferred: bool = False) -> argparse.ArgumentParser:
    """The whole command tree (the CLI contract in DESIGN.md); `deferred`: each group of
    commands is imported and added only if the command line names one of its commands."""
    parser = _Parser(
        prog="engram",
        description="See and control what an AI agent remembers about a person.",
    )
    parser.add_argument("--version", action="version", version=f"engram {__version__}")
    _add_globals(parser)
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_Parser, action=_Commands
    )
    assert isinstance(commands, _Commands)
    commands.required = True
    for module, function, helps in GROUPS:
        if deferred:
            for name, text in helps.items():
                commands.add_deferred(name, text, module, function)
        else:
            getattr(importlib.import_module(f"engram.cli.{module}"), function)(commands)
    _globals_after_commands(parser)
    return parser
