"""`engram [COMMAND ...] --help` without argparse (issue 20 item 10): each parser's help
laid out from quick_help_data.py, the help as argparse holds it before laying it out, which
packaging/cli_files.py writes from the real parsers. Importing argparse and the `re`, `enum`,
`gettext` and `textwrap` modules it stands on cost about as much as Python's own start, and
a command's module (with the store and SQLAlchemy behind it) fifty times that.

The layout below is argparse's HelpFormatter and textwrap's greedy wrap, step for step, for
the kinds of item the parsers have; tests/unit/test_issue20_startup.py compares it with the
real parsers' help at many terminal widths, and `text()` gives None (so the real parser
answers) for a command the data leaves out and under any other Python than the one whose
argparse made the data. (argparse's own words, "usage:" and the headings, are as made: a
gettext catalogue for Python's default domain translating them would not be seen here.)
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# One item of a section: its invocation ("--store STORE"), how deep it sits (0, or 1 for a
# command under COMMAND), and its help split into textwrap's chunks (None: no help).
Item = tuple[str, int, "tuple[str, ...] | None"]
# A section: its heading (None: none), its description's chunks, its items.
Section = tuple["str | None", "tuple[str, ...] | None", "tuple[Item, ...]"]
# One parser's help: the usage's prefix, prog, usage and parts (optionals', positionals'),
# the description's chunks, the longest invocation (argparse's _action_max_length), sections.
Layout = tuple[
    str,
    str,
    str,
    "tuple[str, ...]",
    "tuple[str, ...]",
    "tuple[str, ...] | None",
    int,
    "tuple[Section, ...]",
]


def columns() -> int:
    """The terminal's width as shutil.get_terminal_size finds it (COLUMNS, then the
    terminal, then 80), without importing shutil and the compression modules it brings."""
    try:
        width = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        width = 0
    if width <= 0:
        try:
            width = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            width = 0
    return width if width > 0 else 80


def text(command: Sequence[str] = (), width: int | None = None) -> str | None:
    """The help `engram [COMMAND ...] --help` prints at this width (argparse's: the
    terminal's, 2 columns spare), or None when the data has none for that command (or was
    made by another Python), so the real parser answers."""
    from engram.cli import quick_help_data as data

    layout = data.PARSERS.get(tuple(command))
    if layout is None or tuple(sys.version_info[:2]) != data.PYTHON:
        return None
    prefix, prog, usage, opt_parts, pos_parts, description, longest, sections = layout
    width = columns() - 2 if width is None else width
    parts = [_usage(prefix, prog, usage, opt_parts, pos_parts, width)]
    if description is not None:
        parts.append(_text(description, width, 0))
    help_position = min(longest + 2, min(24, max(width - 20, 4)))
    for heading, about, items in sections:
        body = _text(about, width, 2) if about is not None else ""
        body += "".join(_item(item, help_position, width) for item in items)
        if body:
            parts.append(f"\n{heading}:\n{body}\n" if heading is not None else f"\n{body}\n")
    done = "".join(parts)
    while "\n\n\n" in done:
        done = done.replace("\n\n\n", "\n\n")
    return done.strip("\n") + "\n" if done else done


def _text(chunks: Sequence[str], width: int, indent: int) -> str:
    """HelpFormatter._format_text: a description filled to the width, at an indent."""
    lines = _wrap(chunks, max(width - indent, 11) - indent)
    return "\n".join(" " * indent + line for line in lines) + "\n\n"


def _item(item: Item, help_position: int, width: int) -> str:
    """HelpFormatter._format_action for one item (sub-items are items of their own)."""
    invocation, depth, chunks = item
    indent = 2 + 2 * depth
    action_width = help_position - indent - 2
    if chunks is None:
        return f"{'':{indent}}{invocation}\n"
    if len(invocation) <= action_width:
        head, first = f"{'':{indent}}{invocation:<{action_width}}  ", 0
    else:
        head, first = f"{'':{indent}}{invocation}\n", help_position
    lines = _wrap(chunks, max(width - help_position, 11))
    rest = "".join(f"{'':{help_position}}{line}\n" for line in lines[1:])
    return f"{head}{'':{first}}{lines[0]}\n{rest}"


def _usage(
    prefix: str,
    prog: str,
    usage: str,
    opt_parts: Sequence[str],
    pos_parts: Sequence[str],
    width: int,
) -> str:
    """HelpFormatter._format_usage: one line if it fits, else the parts wrapped."""
    if len(prefix) + len(usage) <= width:
        return f"{prefix}{usage}\n\n"

    def lines_of(parts: Sequence[str], indent: str, first: str | None = None) -> list[str]:
        lines: list[str] = []
        line: list[str] = []
        length = len(indent if first is None else first) - 1
        for part in parts:
            if length + 1 + len(part) > width and line:
                lines.append(indent + " ".join(line))
                line, length = [], len(indent) - 1
            line.append(part)
            length += len(part) + 1
        if line:
            lines.append(indent + " ".join(line))
        if first is not None:
            lines[0] = lines[0][len(indent) :]
        return lines

    if len(prefix) + len(prog) <= 0.75 * width:
        indent = " " * (len(prefix) + len(prog) + 1)
        if opt_parts:
            lines = lines_of([prog, *opt_parts], indent, prefix)
            lines.extend(lines_of(pos_parts, indent))
        elif pos_parts:
            lines = lines_of([prog, *pos_parts], indent, prefix)
        else:
            lines = [prog]
    else:
        indent = " " * len(prefix)
        lines = lines_of([*opt_parts, *pos_parts], indent)
        if len(lines) > 1:
            lines = [*lines_of(opt_parts, indent), *lines_of(pos_parts, indent)]
        lines = [prog, *lines]
    joined = "\n".join(lines)
    return f"{prefix}{joined}\n\n"


def _wrap(chunks: Sequence[str], width: int) -> list[str]:
    """textwrap.wrap(text, width) given the text's chunks: TextWrapper._wrap_chunks with
    textwrap's defaults (whitespace dropped at line ends, long words broken at hyphens)."""
    lines: list[str] = []
    left = list(reversed(chunks))
    while left:
        line: list[str] = []
        length = 0
        if left[-1].strip() == "" and lines:
            del left[-1]
        while left and length + len(left[-1]) <= width:
            length += len(left[-1])
            line.append(left.pop())
        if left and len(left[-1]) > width:  # _handle_long_word
            space = width - length if width >= 1 else 1
            chunk = left[-1]
            end = space
            if len(chunk) > space:
                hyphen = chunk.rfind("-", 0, space)
                if hyphen > 0 and any(c != "-" for c in chunk[:hyphen]):
                    end = hyphen + 1
            line.append(chunk[:end])
            left[-1] = chunk[end:]
            length = sum(map(len, line))
        if line and line[-1].strip() == "":
            length -= len(line[-1])
            del line[-1]
        if line:
            lines.append("".join(line))
    return lines
