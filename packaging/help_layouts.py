"""app/engram/cli/quick_help_data.py, written by packaging/cli_files.py: each parser's help
as argparse holds it before laying it out, which `engram [COMMAND ...] --help` lays out
without argparse (cli/quick_help.py; issue 20 item 10). A parser with something the quick
layout does not do (a set usage, an epilog, another formatter, blank help) is left out, and
the real parser answers for it.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Iterator

PART = r"\(.*?\)+(?=\s|$)|\[.*?\]+(?=\s|$)|\S+"  # argparse's own, in _format_usage


class Unsupported(Exception):
    """The parser's help has something cli/quick_help.py does not lay out."""


def _chunks(text: str) -> tuple[str, ...]:
    """A help text as argparse hands it to textwrap, split as textwrap splits it."""
    wrapper = textwrap.TextWrapper()
    flat = re.sub(r"\s+", " ", text, flags=re.ASCII).strip()
    return tuple(wrapper._split_chunks(wrapper._munge_whitespace(flat)))  # type: ignore[attr-defined]


def _item(formatter: argparse.HelpFormatter, action: argparse.Action, depth: int) -> tuple:
    invocation = formatter._format_action_invocation(action)
    if not action.help:
        return (invocation, depth, None)
    expanded = formatter._expand_help(action)
    if not (action.help.strip() and expanded):
        raise Unsupported(f"{invocation}: help that is only blanks")
    return (invocation, depth, _chunks(expanded))


def layout(parser: argparse.ArgumentParser) -> tuple:
    """One parser's help before layout (quick_help.Layout), as HelpFormatter.format_help
    gathers it; raises Unsupported for what the quick layout does not do."""
    if parser.usage is not None or parser.epilog is not None:
        raise Unsupported("a set usage or an epilog")
    formatter = parser._get_formatter()
    if type(formatter) is not argparse.HelpFormatter:
        raise Unsupported("another formatter")
    for flag in ("-h", "--help"):
        if not isinstance(parser._option_string_actions.get(flag), argparse._HelpAction):
            raise Unsupported(f"{flag} is not help")
    groups = parser._mutually_exclusive_groups
    optionals = [action for action in parser._actions if action.option_strings]
    positionals = [action for action in parser._actions if not action.option_strings]
    usage = formatter._format_actions_usage(optionals + positionals, groups)
    opt_parts = re.findall(PART, formatter._format_actions_usage(optionals, groups))
    pos_parts = re.findall(PART, formatter._format_actions_usage(positionals, groups))
    description = None
    if parser.description is not None:
        description = _chunks(parser.description % {"prog": parser.prog})
    sections = []
    for group in parser._action_groups:
        if group.title is argparse.SUPPRESS or group.description is argparse.SUPPRESS:
            raise Unsupported("a suppressed heading or description")
        about = None
        if group.description is not None:
            about = _chunks(group.description % {"prog": parser.prog})
        formatter.start_section(group.title)
        formatter.add_arguments(group._group_actions)
        formatter.end_section()
        items = []
        for action in group._group_actions:
            if action.help is argparse.SUPPRESS:
                continue
            items.append(_item(formatter, action, 0))
            for sub in getattr(action, "_get_subactions", list)():
                if hasattr(sub, "_get_subactions"):
                    raise Unsupported("sub-items of sub-items")
                items.append(_item(formatter, sub, 1))
        sections.append((group.title, about, tuple(items)))
    return (
        argparse._("usage: "),  # type: ignore[attr-defined]
        parser.prog,
        " ".join(s for s in (parser.prog, usage) if s),
        tuple(opt_parts),
        tuple(pos_parts),
        description,
        formatter._action_max_length,  # type: ignore[attr-defined]
        tuple(sections),
    )


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser named by a command line of command names alone (`engram notes list`):
    below a parser whose only positional is its commands."""
    yield path, parser
    positionals = [action for action in parser._actions if not action.option_strings]
    if len(positionals) == 1 and isinstance(positionals[0], argparse._SubParsersAction):
        for name, sub in positionals[0].choices.items():
            yield from commands(sub, (*path, name))


def source(parser: argparse.ArgumentParser) -> str:
    """quick_help_data.py for the whole command tree."""
    lines = []
    for path, sub in commands(parser):
        try:
            lines.append(f"    {path!r}: {layout(sub)!r},\n")
        except Unsupported:
            continue  # the real parser answers `--help` for this one
    major, minor = sys.version_info[:2]
    return (
        '"""Written by packaging/cli_files.py from the parsers: do not edit. `engram [COMMAND\n'
        '...] --help` lays it out (cli/quick_help.py) as argparse would under this Python."""\n'
        "\nfrom __future__ import annotations\n\n"
        "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from engram.cli.quick_help import Layout\n\n"
        f"PYTHON: tuple[int, int] = ({major}, {minor})\n"
        f"PARSERS: dict[tuple[str, ...], Layout] = {{\n{''.join(lines)}}}\n"
    )
