"""Items in the OpenAI Responses format (what the OpenAI Agents SDK hands its session),
split into what Engram's log reads and what only the session needs back.

An item's visible text — what the person wrote, what the assistant said, a tool call's
arguments and its result — becomes the text of the log entry every reader knows (a turn,
a tool call, a tool result), so history search, learning, excision and the inspector treat
it like any other. The rest of the item (ids, status, annotations, part types, and every
item Engram does not read, such as reasoning) is its *envelope*: the item with those texts
cut out, kept sealed beside the entry, so each text is stored once and an excision removes
it from the session as well (H4, H5). `join_item(envelope, text)` gives the item back.

Pure: no store, no I/O; runtime/session_log.py writes and reads the entries.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engram.model.conversation import EntryKind
from engram.model.errors import InvalidInput, damaged

# The part types whose text a person or the model can read, and the key holding it.
_VISIBLE_PARTS = {"input_text": "text", "output_text": "text", "refusal": "refusal"}
_SEPARATOR = "\n"  # between the texts of one item's parts, in its turn's text
REMOVED = "[This content was removed from the conversation's record.]"

Path = list[str | int]


@dataclass(frozen=True, slots=True)
class SplitItem:
    """One item as the log keeps it: the entry its visible text goes in (None: the item
    has no entry of its own), that text, and the envelope; `whole` is the item itself (as
    plain JSON data), the envelope of an item that ends up with no entry of its own."""

    kind: EntryKind | None
    text: str
    envelope: dict[str, Any]
    whole: dict[str, Any]
    item_type: str
    tool: str | None = None  # a tool call's or result's tool name
    call_id: str | None = None  # the framework's id linking a tool result to its call


def _item_type(item: Mapping[str, Any]) -> str:
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"  # the short form: {"role": "user", "content": "…"}
    return str(kind)


def split_item(item: Mapping[str, Any]) -> SplitItem:
    """The entry kind, visible text and envelope of one Responses-format item."""
    if not isinstance(item, Mapping):
        raise InvalidInput("A session item must be a JSON object.")
    whole = _plain(item)
    body = copy.deepcopy(whole)
    kind_of = _item_type(body)
    holes: list[tuple[Path, bool]] = []
    kind: EntryKind | None = None
    tool = call_id = None
    if kind_of == "message" and body.get("role") in ("user", "assistant"):
        kind = EntryKind.USER if body["role"] == "user" else EntryKind.ASSISTANT
        content = body.get("content")
        if isinstance(content, str):
            holes.append((["content"], False))
        elif isinstance(content, list):
            for i, part in enumerate(content):
                key = _VISIBLE_PARTS.get(str(part.get("type"))) if isinstance(part, dict) else None
                if key is not None and isinstance(part.get(key), str):
                    holes.append((["content", i, key], False))
    elif kind_of == "function_call":
        kind, tool, call_id = EntryKind.TOOL_CALL, _text_field(body, "name"), body.get("call_id")
        holes.append((["arguments"], not isinstance(body.get("arguments"), str)))
    elif kind_of == "function_call_output":
        kind, call_id = EntryKind.TOOL_RESULT, body.get("call_id")
        holes.append((["output"], not isinstance(body.get("output"), str)))
    texts: list[str] = []
    cut: list[dict[str, Any]] = []
    for path, as_json in holes:
        value = _take(body, path)
        text = json.dumps(value, ensure_ascii=False) if as_json else str(value)
        texts.append(text)
        cut.append({"path": path, "length": len(text), "json": as_json})
    return SplitItem(
        kind,
        _SEPARATOR.join(texts),
        {"item": body, "holes": cut},
        whole,
        kind_of,
        tool,
        str(call_id) if call_id is not None else None,
    )


def join_item(envelope: Mapping[str, Any], text: str | None) -> dict[str, Any]:
    """The item as it was given, its texts put back from `text` (its entry's text); where
    that text was removed (None), each hole says so instead of holding it."""
    item: dict[str, Any] = copy.deepcopy(envelope["item"])
    holes = envelope.get("holes", [])
    at = 0
    for hole in holes:
        if text is None:
            _put(item, hole["path"], REMOVED)
            continue
        piece = text[at : at + int(hole["length"])]
        if len(piece) != hole["length"]:
            raise damaged("The store is damaged: a session item does not match its turn's text")
        at += len(piece) + len(_SEPARATOR)
        _put(item, hole["path"], json.loads(piece) if hole["json"] else piece)
    return item


def _plain(item: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy as plain JSON data; anything JSON cannot hold is refused in one sentence."""
    try:
        copied = json.loads(json.dumps(item, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError):
        raise InvalidInput(
            "A session item holds a value that is not JSON (only text, numbers, true/false, "
            "null, lists and objects can be kept); nothing was written."
        ) from None
    if not isinstance(copied, dict):
        raise InvalidInput("A session item must be a JSON object.")
    return copied


def _text_field(body: Mapping[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"A {_item_type(body)} item needs a text {key!r}; nothing was written.")
    return value


def _take(body: dict[str, Any], path: Path) -> Any:
    """The value at `path`, which is left holding None (a hole)."""
    where: Any = body
    for step in path[:-1]:
        where = where[step]
    value = where[path[-1]]
    where[path[-1]] = None
    return value


def _put(body: dict[str, Any], path: Path, value: Any) -> None:
    where: Any = body
    for step in path[:-1]:
        where = where[step]
    where[path[-1]] = value


def shown_item(envelope: str) -> str:
    """A kept item, from its stored envelope, as JSON text for a person to read."""
    return json.dumps(json.loads(envelope)["item"], ensure_ascii=False)
