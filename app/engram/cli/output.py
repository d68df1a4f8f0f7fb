"""Printing results and errors: JSON for automation, short plain text for people."""

from __future__ import annotations

import argparse
import codecs
import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from engram.control import json_stream


def emit_json(value: Any) -> None:
    """Print one JSON document (\\u escapes for what the terminal cannot encode, such as
    an argument's undecodable bytes quoted back in an error)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
    try:
        text.encode(sys.stdout.encoding or "utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, indent=2, ensure_ascii=True, sort_keys=False)
    sys.stdout.write(text + "\n")


def emit_json_items(items: Iterable[Any]) -> None:
    """Print a JSON array as emit_json would, an item at a time (a listing too long to hold
    whole: `notes list --all`); \\u escapes when the terminal's encoding is not UTF."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    ensure_ascii = not codecs.lookup(encoding).name.startswith("utf")
    for piece in json_stream.chunks(json_stream.Lazy(items), ensure_ascii=ensure_ascii):
        sys.stdout.write(piece)
    sys.stdout.write("\n")


def emit_error(message: str, as_json: bool) -> None:
    """One plain sentence on stderr; with --json also {"error": …} on stdout."""
    sys.stderr.write(message.rstrip() + "\n")
    if as_json:
        emit_json({"error": message})


def emit_warning(message: str) -> None:
    """Something the person must know that is not the result: on stderr, so what a script
    reads from stdout stays unchanged."""
    sys.stderr.write(message.rstrip() + "\n")


def emit_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A plain aligned table."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for index, row in enumerate(cells):
        line = "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
        sys.stdout.write(line + "\n")
        if index == 0:
            sys.stdout.write("  ".join("-" * w for w in widths) + "\n")


def emit_line(text: str = "") -> None:
    """One line of plain output."""
    sys.stdout.write(text + "\n")


def shorten(text: str | None, width: int = 60) -> str:
    """Text cut to a table cell."""
    if text is None:
        return "[removed]"
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Every command takes --json."""
    parser.add_argument("--json", action="store_true", help="print JSON for automation")
