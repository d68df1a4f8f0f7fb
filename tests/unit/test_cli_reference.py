"""docs/cli.md is generated from the argparse parsers (issue 12 item 4)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from engram.cli import reference
from engram.cli.parser import build_parser

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_issue12_item4_cli_md_is_current(monkeypatch: pytest.MonkeyPatch) -> None:
    # A host's variables must not leak into the reference (they once became defaults).
    monkeypatch.setenv("ENGRAM_PERSON", "someone")
    monkeypatch.setenv("ENGRAM_CONVERSATION", "c_0123")
    """Fails when a command, option or help text changed without regenerating the doc."""
    assert DOC.read_text(encoding="utf-8") == reference.render(), (
        "docs/cli.md is out of date: run "
        "'.venv/bin/python -m engram.cli.reference > docs/cli.md' and commit it."
    )


def test_issue12_item4_reference_names_every_command_and_option() -> None:
    """The generator walks the whole tree: every leaf command and each of its options."""
    text = reference.render()
    parser = build_parser()
    shared = {o for action in parser._actions for o in action.option_strings}
    seen = 0
    for parser_, _help in reference._walk(parser, None):
        if not reference.runs(parser_):
            continue
        heading = f"## `{parser_.prog}`\n"
        assert heading in text
        section = text.split(heading, 1)[1].split("\n## ", 1)[0]
        for action in parser_._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            if shared & set(action.option_strings):
                continue  # global options are listed once, under "Global options"
            names = action.option_strings or [str(action.metavar or action.dest)]
            assert f"| `{', '.join(names)}" in section, (parser_.prog, names)
        seen += 1
    assert seen >= 40  # init … mcp: the whole contract, not a handful


def test_issue12_item4_reference_does_not_depend_on_terminal_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """argparse wraps usage to $COLUMNS; the doc must not change with the terminal."""
    monkeypatch.setenv("COLUMNS", "40")
    narrow = reference.render()
    monkeypatch.setenv("COLUMNS", "200")
    assert reference.render() == narrow


def _missing_help(parser: argparse.ArgumentParser) -> list[str]:
    """Every argument (but -h) and subcommand under `parser` that says nothing about itself."""
    missing = []
    for parser_, _help in reference._walk(parser, None):
        for action in parser_._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if isinstance(action, argparse._SubParsersAction):
                # argparse lists a subcommand in _choices_actions only when given help=
                helps = {choice.dest: choice.help for choice in action._choices_actions}
                missing += [
                    f"{parser_.prog} {name}"
                    for name in action.choices
                    if not (helps.get(name) or "").strip()
                ]
                continue
            if not (action.help or "").strip() or action.help == argparse.SUPPRESS:
                name = "/".join(action.option_strings) or action.dest
                missing.append(f"{parser_.prog} {name}")
    return missing


def test_issue12_item4_every_argument_and_subcommand_has_help() -> None:
    """`engram X --help` and docs/cli.md explain every value: no empty "meaning" cell."""
    assert _missing_help(build_parser()) == []


def test_issue12_item4_missing_help_is_caught() -> None:
    """The walk reaches nested subcommands and their positionals, so the check can fail."""
    parser = argparse.ArgumentParser(prog="engram")
    group = parser.add_subparsers(dest="command").add_parser("things", help="some things")
    actions = group.add_subparsers(dest="action")
    actions.add_parser("list", help="every thing").add_argument("--limit", help="how many")
    bare = actions.add_parser("show")
    bare.add_argument("thing")
    assert _missing_help(parser) == ["engram things show", "engram things show thing"]


def test_issue12_item4_subcommand_help_names_no_internal_tool() -> None:
    """A person reads these: no tool names such as conversation_find leak into them."""
    parser = build_parser()
    for parser_, helptext in reference._walk(parser, None):
        assert not re.search(r"\b[a-z]+_[a-z_]+\b", helptext or ""), (parser_.prog, helptext)
