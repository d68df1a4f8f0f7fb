"""What may arrive from outside, declared once (pydantic v2): import lines, agent
configuration files, and later the HTTP face's bodies.

Everything here is strict: no coercion (`"false"` is not false, `true` is not a name, a
list is not a string), no field that is not declared, and, before any parsing, bounded
nesting and bounded number literals, so a 5,000-digit number or ten thousand brackets are
refused as text, never turned into an int or a deep object. A refusal is a sentence
fragment naming the field (`describe`); the caller adds where (a line number) and what
happened (nothing was imported).

No HTTP, CLI or store concerns live here: these are shapes and their rules.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    Strict,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from engram.model.conversation import Surface, TurnStatus
from engram.model.scope import Kind
from engram.model.sensitivity import SensitiveCategory

MAX_DEPTH = 32  # arrays and objects inside one another
MAX_NUMBER_CHARS = 32  # a number literal, sign, digits, point and exponent together
MAX_TEXT_CHARS = 200_000  # the most a turn or a tool result may hold
MAX_NAME_CHARS = 200  # authors and tool names
MAX_PARTICIPANTS = 100

M = TypeVar("M")


class WireError(ValueError):
    """Input that does not fit its declared shape; the message is a sentence fragment."""


class StrictModel(BaseModel):
    """No coercion, no undeclared fields, immutable."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


# Enum members arrive as their values (JSON has no enums): accepted by value, nothing else.
SurfaceValue = Annotated[Surface, Strict(False)]
StatusValue = Annotated[TurnStatus, Strict(False)]
CategoryValue = Annotated[SensitiveCategory, Strict(False)]
KindValue = Annotated[Kind, Strict(False)]
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]


# ---- `engram import`: one JSON object per line ------------------------------------------


class ConversationLine(StrictModel):
    """Starts a conversation; the lines after it belong to it."""

    type: Literal["conversation"]
    participants: list[Name] = Field(min_length=1, max_length=MAX_PARTICIPANTS)
    surface: SurfaceValue = Surface.CHAT
    incognito: bool = False
    agent: Name | None = None


class TurnLine(StrictModel):
    """A user or assistant turn."""

    type: Literal["turn"]
    role: Literal["user", "assistant"]
    author: Name
    text: Text
    status: StatusValue = TurnStatus.COMMITTED


class ToolLine(StrictModel):
    """A tool call and its result."""

    type: Literal["tool"]
    name: Name
    args: JsonValue = Field(default_factory=dict)
    result: Text

    @field_validator("args")
    @classmethod
    def _object_or_text(cls, value: JsonValue) -> JsonValue:
        if not isinstance(value, dict | str):
            raise ValueError("'args' must be a JSON object or a string")
        return value


TranscriptLine = Annotated[ConversationLine | TurnLine | ToolLine, Field(discriminator="type")]
LINE_TYPES = ("conversation", "turn", "tool")
TRANSCRIPT_LINE: TypeAdapter[ConversationLine | TurnLine | ToolLine] = TypeAdapter(TranscriptLine)


# ---- agent configuration files (P2) -------------------------------------------------------


class ToolSettings(StrictModel):
    """memory.tools: which typed tools the agent asks for, and what they may write."""

    model_config = ConfigDict(populate_by_name=True)
    search: bool = False
    remember: bool = False
    update: bool = False
    forget: bool = False
    write_scope: str = Field("invocation-user", alias="writeScope")
    writable_kinds: list[KindValue] | None = Field(None, alias="writableKinds")


class LearningSettings(StrictModel):
    """memory.learning: what post-turn learning may do, and where."""

    mode: Literal["off", "suggest", "automatic"] = "off"
    surfaces: list[SurfaceValue] | None = None
    kinds: list[KindValue] | None = None
    auto_apply_categories: list[CategoryValue] | None = Field(None, alias="autoApplyCategories")


class MemorySettings(StrictModel):
    """The `memory` object of an agent's configuration."""

    tools: ToolSettings = ToolSettings.model_validate({})  # frozen: a default can be shared
    learning: LearningSettings = LearningSettings.model_validate({})


class AgentConfigFile(StrictModel):
    """An agent configuration file as `engram agents set --config` reads it."""

    memory: MemorySettings = MemorySettings()


# ---- parsing ------------------------------------------------------------------------------

# Strings (skipped whole), brackets, number literals, the words Python's json module takes
# for numbers JSON does not have, and a quote that never closes.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]|-?[0-9][0-9.eE+-]*|-?Infinity|NaN|"')
NOT_JSON_NUMBERS = "NaN or Infinity, which are not JSON numbers"


# A UTF-8 byte order mark: Windows editors put one at the start of a file. Every import
# strips it there and nowhere else (inside text U+FEFF is a zero-width no-break space).
BOM = "\ufeff"


def without_bom(text: str) -> str:
    """A file's text, or its first line, without a leading byte order mark."""
    return text.removeprefix(BOM)


def check_shape(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH, number literals longer than MAX_NUMBER_CHARS,
    and NaN or Infinity (which Python's json and pydantic take, and JSON does not have), by
    scanning the text before any parser sees it (WireError's message is a noun phrase: what
    the text holds that it may not)."""
    depth = 0
    for token in _TOKEN.finditer(text):
        first = token.group()[0]
        if first == '"':
            if len(token.group()) == 1:
                return  # an unterminated string: the parser will say so
        elif first in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise WireError(f"arrays or objects nested more than {MAX_DEPTH} deep")
        elif first in "]}":
            depth -= 1
        elif token.group().lstrip("-") in ("NaN", "Infinity"):
            raise WireError(NOT_JSON_NUMBERS)
        elif len(token.group()) > MAX_NUMBER_CHARS:
            raise WireError(f"a number longer than {MAX_NUMBER_CHARS} characters")


def parse_json(shape: type[M] | TypeAdapter[M], text: str | bytes, noun: str = "field") -> M:
    """Check the shape, then parse and validate strictly; WireError says what is wrong."""
    adapter = shape if isinstance(shape, TypeAdapter) else _adapter(shape)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise WireError("bytes that are not UTF-8 text") from None
    check_shape(text)
    try:
        return adapter.validate_json(text)
    except ValidationError as error:
        raise WireError(describe(error, noun)) from None


def strict_json(text: str) -> Any:
    """Parse JSON text as RFC 8259 has it, after `check_shape`: WireError for NaN or
    Infinity, too deep a nesting or too long a number; ValueError for text that is not
    JSON at all."""
    check_shape(text)
    return json.loads(text, parse_constant=_not_a_json_number)


def _not_a_json_number(_word: str) -> Any:
    raise WireError(NOT_JSON_NUMBERS)


def finite(value: Any) -> bool:
    """Whether parsed data holds only numbers JSON has (no NaN, no ±Infinity): data an SDK
    parsed for us (pydantic takes NaN) is checked here."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(finite(v) for v in value)
    return True


def validate_data(model: type[M], data: Any, noun: str = "field") -> M:
    """Validate data already in Python form (from a caller, not from the wire): the same
    rules, enum members by value; no shape check (Python data has no digits to count)."""
    try:
        return _adapter(model).validate_python(data)
    except ValidationError as error:
        raise WireError(describe(error, noun)) from None


_ADAPTERS: dict[object, TypeAdapter[Any]] = {}


def _adapter(model: type[M]) -> TypeAdapter[M]:
    adapter = _ADAPTERS.get(model)
    if adapter is None:
        adapter = _ADAPTERS[model] = TypeAdapter(model)
    return adapter


def describe(error: ValidationError, noun: str = "field") -> str:
    """The first problem as a fragment: "'incognito' must be true or false", or for the
    whole document a noun phrase: "not valid JSON (…)", "unknown fields: colour"."""
    problems = error.errors(include_url=False, include_input=False)
    first = problems[0]
    kind, ctx = first["type"], first.get("ctx") or {}
    loc = _named(first["loc"])
    if kind == "json_invalid":
        detail = str(ctx.get("error", "")).split(" at line ")[0]
        if "surrogate" in detail or "hex escape" in detail:
            return "text that is not valid Unicode (a lone surrogate escape)"
        return f"not valid JSON ({detail})" if detail else "not valid JSON"
    if kind == "extra_forbidden":
        parent = loc[:-1]
        extra = sorted(
            _shown(str(named[-1]))
            for p in problems
            if p["type"] == kind and (named := _named(p["loc"]))[:-1] == parent
        )
        listed = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
        if not parent:
            return f"unknown {noun}s: {listed}"
        return f"{_path(parent)} has unknown {noun}s: {listed}"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return f"'type' must be {_choices(LINE_TYPES)}"
    if not loc and kind in ("model_type", "model_attributes_type", "dict_type"):
        return "not a JSON object"
    where = _path(loc) if loc else "the value"
    expectation = _EXPECTATIONS.get(kind)
    if expectation is not None:
        return f"{where} {expectation}"
    if kind in ("enum", "literal_error"):
        options = [o.strip() for o in re.split(r",| or ", str(ctx.get("expected", "")))]
        return f"{where} must be {_choices(options)}"
    if kind == "string_too_long":
        return f"{where} is longer than {int(ctx.get('max_length', 0)):,} characters"
    if kind == "too_long":
        return f"{where} may hold at most {int(ctx.get('max_length', 0)):,} items"
    if kind == "value_error":
        return str(ctx.get("error", first["msg"]))
    return f"{where}: {first['msg'][0].lower()}{first['msg'][1:]}"


_EXPECTATIONS = {
    "missing": "is missing",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "dict_type": "must be a JSON object",
    "model_type": "must be a JSON object",
    "model_attributes_type": "must be a JSON object",
    "int_type": "must be a whole number",
    "string_too_short": "must not be empty",
    "too_short": "must not be empty",
}


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.-]{1,40}")


def _shown(name: str) -> str:
    """A name from the input as a message may quote it: plain, or escaped and cut short
    (it may hold a line break or anything else)."""
    if _PLAIN_NAME.fullmatch(name):
        return name
    quoted = ascii(name)
    return quoted if len(quoted) <= 42 else quoted[:40] + "…'"


def _named(loc: Sequence[int | str]) -> tuple[int | str, ...]:
    """The location without the union's tag (a discriminated union puts it first)."""
    if len(loc) > 1 and loc[0] in LINE_TYPES:
        return tuple(loc[1:])
    return tuple(loc)


def _path(loc: Sequence[int | str]) -> str:
    names = [str(p) for p in loc if isinstance(p, str)]
    dotted = ".".join(names)
    shown = dotted if "." in dotted else f"'{dotted}'"
    index = next((p for p in reversed(loc) if isinstance(p, int)), None)
    return shown if index is None else f"item {index + 1} of {shown}"


def _choices(options: Sequence[str]) -> str:
    cleaned = [o.strip().strip("'") for o in options if o.strip()]
    if len(cleaned) <= 2:
        return " or ".join(cleaned)
    return "one of: " + ", ".join(cleaned[:-1]) + " or " + cleaned[-1]
