"""docs/cli.md is generated from the argparse parsers (issue 12 item 4)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from engram.cli import reference
from engram.cli.main import build_parser

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_issue12_item4_cli_md_is_current() -> None:
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
        if reference._subcommands(parser_) is not None:
            continue
        heading = f"## `{parser_.prog}`\n"
        assert heading in text
        section = text.split(heading, 1)[1].split("\n## ", 1)[0]
        for action in parser_._actions:
            if isinstance(action, argparse._HelpAction) or shared & set(action.option_strings):
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
