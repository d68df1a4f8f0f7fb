"""What every agent-facing tool shares: OpenAI-shaped definitions, argument checks, and
one way to run a call so bad input comes back as {"error": …}, never as an exception.

Arguments a model might send to reach past the host's attribution (another person,
conversation or scope) are dropped before any tool sees them (H6, P3, W6).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from engram.model.errors import EngramError, InvalidInput

IGNORED_ARGUMENTS = frozenset(
    {"conversation", "conversation_id", "person", "person_id", "user", "scope", "audience"}
)
LIMIT_SCHEMA = {"type": "integer", "minimum": 1, "maximum": 25, "description": "5 by default"}


def function_tool(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    """A tool definition in the OpenAI function-calling shape."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


def text_arg(args: Mapping[str, Any], key: str) -> str:
    """A required text argument."""
    value = args.get(key)
    if not isinstance(value, str):
        raise InvalidInput(f"The tool needs a text argument {key!r}.")
    return value


def limit_arg(args: Mapping[str, Any]) -> int | None:
    """The optional whole-number `limit`."""
    value = args.get("limit")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInput("'limit' must be a whole number.")
    return value


def run_tool(
    arguments: Mapping[str, Any] | str, call: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """Parse the arguments (a JSON object), drop the ignored ones, run the call; any
    refusal comes back as {"error": one sentence}."""
    try:
        if not isinstance(arguments, str | Mapping):
            raise InvalidInput("Tool arguments must be a JSON object.")
        args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
        if not isinstance(args, dict):
            raise InvalidInput("Tool arguments must be a JSON object.")
        return call({k: v for k, v in args.items() if k not in IGNORED_ARGUMENTS})
    except json.JSONDecodeError:
        return {"error": "Tool arguments must be a JSON object."}
    except EngramError as error:
        return {"error": str(error)}
