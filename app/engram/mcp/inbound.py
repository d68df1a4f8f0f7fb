"""What a client sent, judged before the SDK sees it.

JSON-RPC 2.0 asks for an answer to every request, the broken ones included: -32700 when
the text cannot be read, -32600 when it is not a valid request, with the request's id
whenever one can be read (so the client's call ends instead of waiting out its timeout).
The SDK's stdio transport drops such a line without a word, and its HTTP transport answers
with pydantic's multi-line report under -32602; both faces judge here first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import pydantic_core
from mcp_types import INVALID_REQUEST, PARSE_ERROR
from pydantic import ValidationError

MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # the SDK's own limit for an HTTP body


@dataclass(frozen=True)
class Verdict:
    """A message to pass on, an error to answer with, or neither (a broken response)."""

    message: types.JSONRPCMessage | None = None
    reply: types.JSONRPCError | None = None


def judge(raw: bytes) -> Verdict:
    """One message as it came off the wire: accepted, or the one error reply it is owed."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _refused(
            PARSE_ERROR,
            "The message is not UTF-8 text; send JSON encoded as UTF-8.",
            _readable_id(_lenient(raw.decode("utf-8", "replace"))),
        )
    try:
        value = pydantic_core.from_json(text)  # the parser the SDK uses
    except ValueError:
        # Python's parser also reads what pydantic refuses (a lone surrogate escape), so
        # the id of such a request can still be read.
        return _refused(
            PARSE_ERROR,
            "The message is not valid JSON; send one JSON object.",
            _readable_id(_lenient(text)),
        )
    return _checked(value)


def too_long() -> Verdict:
    """The reply to a message over MAX_MESSAGE_BYTES, which is never read."""
    limit = MAX_MESSAGE_BYTES // (1024 * 1024)
    return _refused(PARSE_ERROR, f"The message is longer than {limit} MiB; send a shorter one.")


def _checked(value: Any) -> Verdict:
    if isinstance(value, list):
        return _refused(INVALID_REQUEST, "Batches are not supported; send one JSON-RPC object.")
    if not isinstance(value, dict):
        return _refused(INVALID_REQUEST, "The message is not a JSON-RPC object.")
    try:
        message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        if "method" not in value and ("result" in value or "error" in value):
            return Verdict()  # a broken answer to one of our requests: answering it could loop
        return _refused(INVALID_REQUEST, _what_is_wrong(value), _readable_id(value))
    if isinstance(message, types.JSONRPCNotification) and "id" in value:
        # The SDK reads a request whose id is null, true or 1.5 as a notification and
        # never answers it.
        return _refused(INVALID_REQUEST, "The id must be a string or a whole number.")
    return Verdict(message=message)


def _what_is_wrong(value: dict[str, Any]) -> str:
    if value.get("jsonrpc") != "2.0":
        return 'The message must say "jsonrpc": "2.0".'
    if not isinstance(value.get("method"), str):
        return "The message has no method name."
    if "id" in value and _readable_id(value) is None:
        return "The id must be a string or a whole number."
    if "params" in value and not isinstance(value["params"], dict | None):
        return "The params must be a JSON object (named), not a list or a single value."
    return "The message is not a valid JSON-RPC request."


def _readable_id(value: Any) -> types.RequestId | None:
    """The request's id if it is one a reply can carry."""
    found = value.get("id") if isinstance(value, dict) else None
    if isinstance(found, bool) or not isinstance(found, int | str):
        return None
    if isinstance(found, str):
        try:
            found.encode("utf-8")  # a lone surrogate could not be written back
        except UnicodeEncodeError:
            return None
    return found


def _lenient(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _refused(code: int, message: str, request_id: types.RequestId | None = None) -> Verdict:
    error = types.ErrorData(code=code, message=message)
    return Verdict(reply=types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))
