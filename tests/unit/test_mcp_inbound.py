"""What `engram mcp` owes a client for each message it sends (issue 10 item 1, after the
issue 9 fuzz run): JSON-RPC 2.0's -32700 and -32600, with the id whenever it can be read."""

from __future__ import annotations

import json

import mcp_types as types
import pytest

from engram.mcp.inbound import MAX_MESSAGE_BYTES, judge, too_long

PING = b'{"jsonrpc":"2.0","id":9,"method":"ping"}'


@pytest.mark.parametrize(
    ("raw", "code", "request_id"),
    [
        (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":"\xff"}', -32700, 9),
        (b"\xff\xfe\x00", -32700, None),
        (b"this is not json", -32700, None),
        (b"[" * 30_000, -32700, None),
        (b'{"jsonrpc":"2.0","id":"a","method":"ping","params":{"x":"\\ud800"}}', -32700, "a"),
        (b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', -32700, None),
        (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":"text"}', -32600, 9),
        (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":[1]}', -32600, 9),
        (b'{"jsonrpc":"2.0","id":"x"}', -32600, "x"),
        (b'{"jsonrpc":"2.0","id":9,"method":7}', -32600, 9),
        (b'{"jsonrpc":"1.0","id":9,"method":"ping"}', -32600, 9),
        (b'{"id":9,"method":"ping"}', -32600, 9),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}', -32600, None),
        (b"[" + PING + b"]", -32600, None),
        (b"[]", -32600, None),
        (b'"ping"', -32600, None),
        (b"9", -32600, None),
    ],
)
def test_issue10_item1_each_broken_message_owes_one_error_with_its_id(
    raw: bytes, code: int, request_id: types.RequestId | None
) -> None:
    verdict = judge(raw)
    assert verdict.message is None and verdict.reply is not None
    assert verdict.reply.error.code == code
    assert verdict.reply.id == request_id
    sentence = verdict.reply.error.message
    assert sentence.endswith(".") and "\n" not in sentence and "pydantic" not in sentence
    wire = verdict.reply.model_dump_json(by_alias=True, exclude_unset=True)
    assert json.loads(wire) == {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": code, "message": sentence},
    }


@pytest.mark.parametrize(
    "raw",
    [
        PING,
        b'{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"n"},"extra":1}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":3,"result":{}}',
        '{"jsonrpc":"2.0","id":3,"method":"ping","params":{"q":"caf\u00e9 \U0001f600"}}'.encode(),
    ],
)
def test_issue10_item1_valid_messages_pass_unchanged(raw: bytes) -> None:
    verdict = judge(raw)
    assert verdict.reply is None and verdict.message is not None
    assert verdict.message == types.jsonrpc_message_adapter.validate_json(raw, by_name=False)


def test_issue10_item1_a_broken_response_is_not_answered() -> None:
    """Answering a client's broken answer with an error could start a loop of errors."""
    verdict = judge(b'{"jsonrpc":"2.0","id":3,"result":"not an object"}')
    assert verdict.message is None and verdict.reply is None


def test_issue10_item1_an_over_long_message_is_a_parse_error() -> None:
    verdict = too_long()
    assert verdict.reply is not None and verdict.reply.error.code == -32700
    assert f"{MAX_MESSAGE_BYTES // 2**20} MiB" in verdict.reply.error.message
