"""JSON written piece by piece, for documents too big to hold at once (an export).

A document is ordinary JSON values in which some arrays are `Lazy`: their items are made
only as the text reaches them, so a writer holds one item at a time. The text is exactly
what `json.dumps(document, indent=2)` gives for the same document with every `Lazy`
replaced by a list: streaming changes how much memory an export takes, never its output.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

INDENT = 2
_END = object()


class Lazy:
    """A JSON array whose items come from an iterable, read once, as they are written."""

    def __init__(self, items: Iterable[Any]) -> None:
        self.items = items


def chunks(document: Any, *, ensure_ascii: bool = False) -> Iterator[str]:
    """The document's JSON text (indent 2), in pieces; each `Lazy` is read as it is reached."""
    return _encode(document, 0, ensure_ascii)


def materialize(document: Any) -> Any:
    """The same document with every `Lazy` read into a list (for callers that want it whole)."""
    if isinstance(document, Lazy | list):
        return [materialize(item) for item in _items(document)]
    if isinstance(document, dict) and _holds_lazy(document):
        return {key: materialize(value) for key, value in document.items()}
    return document


def _items(array: Lazy | list[Any]) -> Iterable[Any]:
    return array.items if isinstance(array, Lazy) else array


def _holds_lazy(value: Any) -> bool:
    if isinstance(value, Lazy):
        return True
    if isinstance(value, dict):
        return any(_holds_lazy(v) for v in value.values())
    return isinstance(value, list) and any(_holds_lazy(v) for v in value)


def _encode(value: Any, depth: int, ensure_ascii: bool) -> Iterator[str]:
    outer = "\n" + " " * (INDENT * depth)
    inner = outer + " " * INDENT
    if isinstance(value, Lazy) or (isinstance(value, list) and _holds_lazy(value)):
        items = iter(_items(value))
        item = next(items, _END)
        if item is _END:
            yield "[]"
            return
        yield "[" + inner
        yield from _encode(item, depth + 1, ensure_ascii)
        for item in items:
            yield "," + inner
            yield from _encode(item, depth + 1, ensure_ascii)
        yield outer + "]"
    elif isinstance(value, dict) and _holds_lazy(value):
        separator = "{" + inner
        for key, item in value.items():
            yield separator + json.dumps(str(key), ensure_ascii=ensure_ascii) + ": "
            yield from _encode(item, depth + 1, ensure_ascii)
            separator = "," + inner
        yield outer + "}"
    else:
        # A JSON string never holds a raw newline (json escapes it), so re-indenting the
        # lines of a nested value is safe.
        text = json.dumps(value, indent=INDENT, ensure_ascii=ensure_ascii)
        yield text.replace("\n", outer) if depth else text
