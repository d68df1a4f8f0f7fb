"""Memories kept elsewhere, read from the files people copy them into (issue 21 item 10).

Three shapes: plain text, one memory a line, as copied out of an assistant's memory page
(bullets and check boxes stripped); Markdown, where each list item is one memory, the
headings above it say what it is about and code blocks are skipped; and mem0's export,
the JSON its `get_all` returns (`{"results": [...]}`) or the bare list of its results.
Each memory keeps where it came from (`where`: the line, or mem0's id, time and
categories), for the reviewer to see. Nothing here writes: a file that cannot be read
whole is refused with one sentence naming the line or the entry, so an import is all of
the file or none of it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from engram.engine.extraction import MAX_PROPOSAL_CHARS
from engram.model.errors import InvalidInput
from engram.model.wire import WireError, check_shape, without_bom

FORMATS = ("text", "markdown", "mem0")
NOTHING = "nothing was imported"
_BULLET = r"(?:[-*+•·–]|\d{1,3}[.)])"
_ITEM = re.compile(rf"^(\s*){_BULLET}(?:\s+(?:\[[ xX]\]\s*)?(.*))?$")
_BOX = re.compile(r"^\[[ xX]\]\s*")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`)(\S(?:.*?\S)?)\1")
# C0 controls but tab, and DEL: a text file holds none of them (a NUL says "binary").
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Memory:
    """One memory as the file holds it, and where in the file it is."""

    text: str
    where: dict[str, Any]


@dataclass(slots=True)
class MemoryList:
    """A file's memories in order, in the format it was read as; `ignored` counts what it
    held that is no memory (headings, code, bare bullets, empty entries)."""

    format: str
    memories: list[Memory] = field(default_factory=list)
    ignored: int = 0


def detect_format(content: str, file_name: str = "") -> str:
    """The format a file is in, from its name's ending, else from what it holds."""
    name = file_name.lower()
    if name.endswith(".json"):
        return "mem0"
    if name.endswith((".md", ".markdown")):
        return "markdown"
    start = without_bom(content).lstrip()
    if re.match(r"\{|\[\s*(\{|\]\s*$)", start):  # an object, or a list of them
        return "mem0"
    lines = content.split("\n")
    if any(_HEADING.match(line.strip()) or _FENCE.match(line) for line in lines):
        return "markdown"
    return "text"


def read_memories(content: str, file_name: str = "", file_format: str | None = None) -> MemoryList:
    """The memories `content` holds, in `file_format` (None: detected); InvalidInput, in
    one sentence, when the file cannot be read whole."""
    chosen = file_format or detect_format(content, file_name)
    if chosen not in FORMATS:
        raise InvalidInput(f"{chosen!r} is not a memory format; use {', '.join(FORMATS)}.")
    content = without_bom(content)
    if chosen == "mem0":
        return _mem0(content)
    return _markdown(content) if chosen == "markdown" else _text(content)


def _clean(text: str, where: str) -> str:
    """A memory's words on one line, checked: no control characters, not too long."""
    if _CONTROL.search(text):
        raise InvalidInput(f"{where} holds control characters (is this a text file?); {NOTHING}.")
    cleaned = " ".join(text.split())
    if len(cleaned) > MAX_PROPOSAL_CHARS:
        raise InvalidInput(
            f"{where} holds {len(cleaned):,} characters; a memory may hold at most "
            f"{MAX_PROPOSAL_CHARS:,}, so shorten or split it; {NOTHING}."
        )
    return cleaned


def _lines(content: str) -> list[tuple[int, str]]:
    # Lines end at line feeds only: a U+2028 inside a memory does not split it.
    return [(n, raw.removesuffix("\r")) for n, raw in enumerate(content.split("\n"), start=1)]


def _text(content: str) -> MemoryList:
    found = MemoryList("text")
    for number, line in _lines(content):
        if not line.strip():
            continue
        item = _ITEM.match(line)
        words = (item.group(2) or "") if item else line
        words = _clean(_BOX.sub("", words.strip()), f"Line {number}")
        if words:
            found.memories.append(Memory(words, {"line": number}))
        else:
            found.ignored += 1
    return found


@dataclass(slots=True)
class _Item:
    """A Markdown list item being read: its continuation lines join its words."""

    line: int
    indent: int
    words: str
    where: dict[str, Any]


def _markdown(content: str) -> MemoryList:
    """Each list item one memory (nested ones too, with the item they sit under), its
    headings as its topic; code blocks, quotes, tables and other prose are skipped."""
    found = MemoryList("markdown")
    headings: list[str] = []
    parents: list[tuple[int, str]] = []  # (indent, words) of the items above
    fence: str | None = None
    item: _Item | None = None

    def close() -> None:
        nonlocal item
        if item is not None:
            words = _plain(_clean(item.words, f"Line {item.line}"))
            if words:
                found.memories.append(Memory(words, item.where))
                parents.append((item.indent, words))
            else:
                found.ignored += 1  # a bare bullet
        item = None

    for number, line in _lines(content):
        stripped = line.strip()
        marker = _FENCE.match(line)
        if fence is not None or marker:
            close()
            if marker and (fence is None or marker.group(1) == fence):
                fence = None if fence else marker.group(1)
            found.ignored += 1 if stripped else 0
            continue
        if not stripped:
            close()
            continue
        heading = _HEADING.match(stripped)
        bullet = _ITEM.match(line)
        if heading:
            close()
            level = len(heading.group(1))
            headings = headings[: level - 1] + [""] * (level - 1 - len(headings))
            headings.append(_plain(heading.group(2)))
            parents.clear()
            found.ignored += 1
        elif bullet and not re.fullmatch(r"[-*_\s]{3,}", stripped):  # "- - -" is a rule
            close()
            indent = len(bullet.group(1).expandtabs(4))
            while parents and parents[-1][0] >= indent:
                parents.pop()
            where: dict[str, Any] = {"line": number}
            topic = " › ".join(h for h in headings if h)
            if topic:
                where["heading"] = topic
            if parents:
                where["under"] = parents[-1][1]
            item = _Item(number, indent, _BOX.sub("", (bullet.group(2) or "").strip()), where)
        elif item is not None and line[:1].isspace():
            item.words = f"{item.words} {stripped}"  # the item goes on, indented
        else:
            close()  # prose, a quote, a table row, a rule: not a memory
            found.ignored += 1
    close()
    return found


def _plain(text: str) -> str:
    """Markdown's emphasis and code marks taken off the words."""
    return " ".join(_EMPHASIS.sub(r"\2", text).split())


def _mem0(content: str) -> MemoryList:
    """mem0's `get_all` answer ({"results": [...]}) or the list of its results; each
    result's `memory` is one memory, with its id, times and categories kept."""
    try:
        check_shape(content)
        data = json.loads(content)
    except WireError as error:
        raise InvalidInput(f"The file holds {error}; {NOTHING}.") from None
    except json.JSONDecodeError as error:
        raise InvalidInput(
            f"The file is not valid JSON (line {error.lineno}, column {error.colno}: "
            f"{error.msg}); {NOTHING}."
        ) from None
    results = data.get("results", data.get("memories")) if isinstance(data, dict) else data
    if not isinstance(results, list):
        raise InvalidInput(
            "The file is not a mem0 export: it holds neither a list of memories nor an "
            f'object with "results"; {NOTHING}.'
        )
    found = MemoryList("mem0")
    for index, entry in enumerate(results, start=1):
        words = entry.get("memory") if isinstance(entry, dict) else None
        if not isinstance(words, str) or not words.strip():
            found.ignored += 1
            continue
        assert isinstance(entry, dict)
        known = entry.get("id")
        label = f"The memory {str(known)!r}" if known is not None else f"Entry {index}"
        where: dict[str, Any] = {"entry": index}
        if known is not None:
            where["mem0_id"] = str(known)
        for key in ("created_at", "updated_at", "user_id"):
            if isinstance(entry.get(key), str):
                where[key] = entry[key]
        categories = entry.get("categories")
        if isinstance(categories, list):
            where["categories"] = [str(c) for c in categories if isinstance(c, str | int)]
        found.memories.append(Memory(_clean(words, label), where))
    return found
