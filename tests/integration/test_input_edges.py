"""Issue 15, item 11: input the faces used to take in different ways.

- NaN and Infinity are not JSON numbers: tool arguments (as text or as parsed by an SDK),
  `conversation tool --args` and import lines refuse them instead of storing non-JSON.
- A UTF-8 byte order mark at the start of a file is stripped by `import` and by
  `candidates import-legacy` alike (a Windows editor writes one; it is not content).
- A NUL in a note is refused over HTTP and MCP, as the command line (which cannot pass
  one) and a legacy import (where it marks a binary file) refuse it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from engram.api.app import build_app
from engram.mcp import tools as mcp
from engram.model.ids import ConversationId, PersonId
from engram.runtime import api_keys
from engram.runtime.agents import set_agent
from engram.runtime.conversations import start_conversation
from engram.runtime.history import list_tool_calls
from engram.runtime.tool_calls import NOT_JSON_ARGUMENTS, run_tool
from engram.store.store import Store

ANA = PersonId("ana")
NOT_NUMBERS = ("NaN", "Infinity", "-Infinity")


@pytest.mark.parametrize("word", NOT_NUMBERS)
def test_issue15_item11_tool_arguments_as_text_refuse_nan_and_infinity(word: str) -> None:
    # `scope` is dropped before any tool sees it (H6): a NaN there used to pass unseen.
    arguments = '{"query": "tea", "scope": ' + word + "}"
    assert run_tool(arguments, lambda args: {"ran": True}) == {"error": NOT_JSON_ARGUMENTS}


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_issue15_item11_tool_arguments_an_sdk_parsed_refuse_nan_and_infinity(
    value: float,
) -> None:
    # pydantic, under the MCP SDK, parses NaN and Infinity into floats.
    arguments = {"query": "tea", "limit": 3, "person": {"deep": [value]}}
    assert run_tool(arguments, lambda args: {"ran": True}) == {"error": NOT_JSON_ARGUMENTS}


def test_issue15_item11_an_mcp_tool_refuses_nan_arguments(store: Store) -> None:
    conversation = start_conversation(store, [ANA]).id
    bound = mcp.bind(store, "ana", conversation, None, None)
    answer = mcp.call(bound, "conversation_find", {"query": "x", "audience": math.nan})
    assert answer == {"error": NOT_JSON_ARGUMENTS}


@pytest.mark.parametrize("word", NOT_NUMBERS)
def test_issue15_item11_a_recorded_tool_call_refuses_arguments_that_are_not_json(
    store: Store, cli: Any, word: str
) -> None:
    conversation = start_conversation(store, [ANA]).id
    done = cli(
        "conversation", "tool", conversation, "--name", "calc", "--args", '{"x": ' + word + "}",
        "--result", "42",
    )  # fmt: skip
    assert done.code == 1 and "NaN or Infinity, which are not JSON numbers" in done.err
    assert done.err.count("\n") == 1 and "Traceback" not in done.err
    assert list_tool_calls(store, ConversationId(conversation))["calls"] == []


def test_issue15_item11_an_import_line_refuses_nan(cli: Any, tmp_path: Path) -> None:
    assert cli("init").code == 0
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        '{"type": "conversation", "participants": ["ana"]}\n'
        '{"type": "tool", "name": "calc", "args": {"x": NaN}, "result": "42"}\n',
        "utf-8",
    )
    done = cli("import", str(transcript))
    assert done.code == 1
    assert done.err.strip() == (
        "Line 2: NaN or Infinity, which are not JSON numbers; nothing was imported."
    )


def test_issue15_item11_a_byte_order_mark_is_stripped_by_both_imports(
    cli: Any, tmp_path: Path
) -> None:
    assert cli("init").code == 0
    transcript = tmp_path / "bom.jsonl"
    transcript.write_bytes(
        b"\xef\xbb\xbf"
        + json.dumps({"type": "conversation", "participants": ["ana"]}).encode()
        + b"\n"
        + json.dumps({"type": "turn", "role": "user", "author": "ana", "text": "Hi"}).encode()
        + b"\n"
    )
    imported = cli("import", str(transcript), "--json")
    assert imported.code == 0, imported.err
    assert len(imported.json()["conversations"]) == 1
    legacy = tmp_path / "memory.md"
    legacy.write_bytes("\ufeff# What I know\n- Likes green tea\n".encode())
    offered = cli("candidates", "import-legacy", str(legacy), "--person", "ana", "--json")
    assert offered.code == 0, offered.err
    # The heading stays a heading and the bullet a bullet: the BOM glued to neither.
    assert [c["text"] for c in offered.json()["candidates"]] == ["Likes green tea"]


@pytest.fixture
def http(store: Store) -> Any:
    set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
    _, key = api_keys.create_key(store, "backend", "ops")
    with TestClient(build_app(store)) as client:
        client.headers.update(
            {"Authorization": f"Bearer {key}", "X-Engram-External-User-Id": "ana"}
        )
        yield client


def test_issue15_item11_a_nul_in_a_note_is_refused_over_http(http: Any) -> None:
    items = "/v1/memory/agents/helper/memory/items"
    made = http.post(items, json={"text": "Plays\x00 the cello.", "kind": "fact"})
    assert made.status_code == 400, made.text
    assert made.json() == {"error": "The text holds a NUL character; nothing was written."}
    assert http.get(items).json()["items"] == []
    kept = http.post(items, json={"text": "Plays the cello.", "kind": "fact"})
    assert kept.status_code == 201
    patched = http.patch(f"{items}/{kept.json()['id']}", json={"text": "Plays\x00 viola."})
    assert patched.status_code == 400 and "NUL" in patched.json()["error"]


def test_issue15_item11_a_nul_in_a_suggestion_is_refused_over_mcp(store: Store) -> None:
    set_agent(store, "helper", {"memory": {"tools": {"remember": True}}}, "ops")
    conversation = start_conversation(store, [ANA], agent="helper").id
    bound = mcp.bind(store, "ana", conversation, "helper", None)
    answer = mcp.call(bound, "memory_remember", {"text": "Lives\x00 in Oslo.", "kind": "fact"})
    assert answer == {"error": "The text holds a NUL character; nothing was written."}
