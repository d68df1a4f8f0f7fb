"""What every agent-facing tool shares: its specification (input and output schemas,
title, behaviour hints), argument checks, and one way to run a call so bad input comes
back as {"error": …}, never as an exception.

Arguments a model might send to reach past the host's attribution (another person,
conversation or scope) are dropped before any tool sees them (H6, P3, W6). Whatever is
left is checked against the tool's input schema by a JSON Schema validator, and a
mistake comes back as one sentence naming the argument.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from engram.engine.recall import LIMIT_TOO_LOW
from engram.model.errors import EngramError, InvalidInput
from engram.model.wire import NOT_JSON_NUMBERS, WireError, finite, strict_json

IGNORED_ARGUMENTS = frozenset(
    {"conversation", "conversation_id", "person", "person_id", "user", "scope", "audience"}
)
NOT_AN_OBJECT = "Tool arguments must be a JSON object."
NOT_JSON_ARGUMENTS = "Tool arguments must be JSON, and NaN and Infinity are not JSON numbers."
LIMIT_SCHEMA = {"type": "integer", "minimum": 1, "maximum": 25, "description": "5 by default"}
_TYPE_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "a list",
}


def answer_object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An output schema: an object with these properties (more may be added later)."""
    return {"type": "object", "properties": properties, "required": required}


@dataclass(frozen=True)
class ToolSpec:
    """One agent tool: what the model is told, what it may send, what it gets back."""

    name: str
    title: str
    description: str
    properties: dict[str, Any]
    required: list[str]
    output: dict[str, Any]
    read_only: bool
    destructive: bool = False
    idempotent: bool = False

    @property
    def input_schema(self) -> dict[str, Any]:
        """The arguments as a JSON Schema object."""
        return {
            "type": "object",
            "properties": self.properties,
            "required": self.required,
            "additionalProperties": False,
        }

    def openai(self) -> dict[str, Any]:
        """The definition in the OpenAI function-calling shape."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.input_schema,
            },
        }

    @cached_property
    def validator(self) -> Draft202012Validator:
        """The compiled input-schema validator."""
        return Draft202012Validator(self.input_schema)

    def check(self, args: Mapping[str, Any]) -> None:
        """Refuse arguments the input schema does not allow, in one sentence naming the field.
        A number out of range is left to the tool: above the maximum it clamps (H1, R1:
        "25 at most"), below 1 `limit_arg` refuses it in the same words everywhere."""
        errors = self.validator.iter_errors(dict(args))
        error = best_match(e for e in errors if e.validator not in ("minimum", "maximum"))
        if error is not None:
            raise InvalidInput(_sentence(self, error))


def _sentence(spec: ToolSpec, error: ValidationError) -> str:
    """A validator's complaint as one sentence that names the argument."""
    name = str(error.path[0]) if error.path else None
    kind = error.validator
    given: Any = error.instance
    if kind == "required":
        missing = next((r for r in spec.required if r not in given), "?")
        return f"{spec.name} needs the argument {missing!r}."
    if kind == "additionalProperties":
        extra = sorted(set(given) - set(spec.properties))
        takes = ", ".join(spec.properties) or "no arguments"
        return f"{spec.name} has no argument {extra[0]!r}; it takes {takes}."
    if name is None:
        return "Tool arguments must be a JSON object."
    schema = spec.properties.get(name, {})
    if kind == "type":
        return f"{name!r} must be {_TYPE_WORDS.get(str(schema.get('type')), 'valid')}."
    if kind == "enum":
        return f"{name!r} must be one of {', '.join(map(str, schema.get('enum', [])))}."
    return f"{name!r} is not valid here ({error.message})."


def text_arg(args: Mapping[str, Any], key: str) -> str:
    """A required text argument."""
    value = args.get(key)
    if not isinstance(value, str):
        raise InvalidInput(f"The tool needs a text argument {key!r}.")
    return value


def limit_arg(args: Mapping[str, Any]) -> int | None:
    """The optional `limit`: a whole number, at least 1 (above the tool's maximum it is
    cut to the maximum). Every tool and recall treat it alike."""
    value = args.get("limit")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInput("'limit' must be a whole number.")
    if value < 1:
        raise InvalidInput(LIMIT_TOO_LOW)
    return value


def run_tool(
    arguments: Mapping[str, Any] | str,
    call: Callable[[dict[str, Any]], dict[str, Any]],
    spec: ToolSpec | None = None,
) -> dict[str, Any]:
    """Parse the arguments (a JSON object), drop the ignored ones, check the rest against
    the tool's schema, run the call; any refusal comes back as {"error": one sentence}."""
    args = _arguments(arguments)
    if isinstance(args, str):
        return {"error": args}
    try:
        kept = {k: v for k, v in args.items() if k not in IGNORED_ARGUMENTS}
        if spec is not None:
            spec.check(kept)
        return call(kept)
    except EngramError as error:
        return {"error": str(error)}


def _arguments(arguments: object) -> dict[str, Any] | str:
    """The arguments as a dict, or the sentence refusing them. Given as JSON text, they are
    checked for depth, number sizes and numbers JSON does not have before parsing
    (model.wire), as any text from outside is; given parsed (an SDK parsed them, and
    pydantic takes NaN), for those numbers after."""
    if isinstance(arguments, Mapping):
        parsed: object = dict(arguments)
    elif isinstance(arguments, str):
        try:
            parsed = strict_json(arguments)
        except WireError as error:  # too deep, numbers too long, or not JSON numbers
            return NOT_JSON_ARGUMENTS if str(error) == NOT_JSON_NUMBERS else NOT_AN_OBJECT
        except (ValueError, RecursionError):  # bad JSON
            return NOT_AN_OBJECT
    else:
        return NOT_AN_OBJECT
    if not isinstance(parsed, dict):
        return NOT_AN_OBJECT
    if not finite(parsed):
        return NOT_JSON_ARGUMENTS
    return parsed
