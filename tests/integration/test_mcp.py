"""`engram mcp` as an MCP client drives it: a real subprocess over stdio (H6, P2, R1, W6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.agents import set_agent
from engram.runtime.conversations import append_turn, start_conversation
from engram.store.store import Store
from tests.conftest import PASSPHRASE

ANA = PersonId("ana")


def _session(store_path: Path, *args: str, messages: list[Any]) -> list[Any]:
    env = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE}
    command = [sys.executable, "-m", "engram", "--store", str(store_path)]
    command += ["--passphrase-env", "TEST_PASSPHRASE", "mcp", *args]
    lines = b"".join(json.dumps(m).encode() + b"\n" for m in messages)
    lines += b"this is not json\n" + b"[" * 30_000 + b"\n" + b'{"bad": "\xff\xfe"}\n'
    done = subprocess.run(command, input=lines, capture_output=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]


def _call(ident: int, name: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


def test_an_mcp_client_gets_the_tools_of_its_own_conversation(
    store: Store, store_path: Path
) -> None:
    set_agent(store, "helper", {"memory": {"tools": {"search": True, "remember": True}}}, "ops")
    mine = start_conversation(store, [ANA], agent="helper")
    turn = append_turn(store, mine.id, role="user", author=ANA, text="My cello lesson is Friday.")
    other = start_conversation(store, [ANA, PersonId("ben")], agent="helper")
    append_turn(store, other.id, role="user", author=ANA, text="cello in the other chat")
    add_note(PersonSession(store, ANA, ANA), "Plays the cello.", Kind.FACT, Scope.DIRECT)
    store.close()
    replies = _session(
        store_path,
        "--person",
        "ana",
        "--conversation",
        mine.id,
        "--allow-tools",
        "memory_search,memory_remember,memory_forget",
        messages=[
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": "2025-03-26", "capabilities": {}},
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            _call(3, "conversation_find", query="cello", conversation=other.id),
            _call(4, "memory_recall"),
            _call(5, "memory_remember", text="Has a cello lesson on Fridays.", kind="fact"),
            _call(6, "memory_forget", item_id="n_nope"),
            {"jsonrpc": "2.0", "id": 7, "method": "resources/list"},
            {"jsonrpc": "2.0", "id": None, "method": "ping"},
            {"jsonrpc": "2.0", "id": 8, "result": {}},  # a response from the client
            {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": [1]},
            [  # a batch: answered as one array, the notification in it left unanswered
                {"jsonrpc": "2.0", "id": 10, "method": "ping"},
                {"jsonrpc": "2.0", "method": "notifications/progress"},
            ],
        ],
    )
    batch = next(r for r in replies if isinstance(r, list))
    assert batch == [{"jsonrpc": "2.0", "id": 10, "result": {}}]
    replies = [r for r in replies if isinstance(r, dict)]
    by_id = {r.get("id"): r for r in replies}
    assert by_id[1]["result"]["protocolVersion"] == "2025-03-26"
    names = [t["name"] for t in by_id[2]["result"]["tools"]]
    assert "conversation_find" in names and "memory_recall" in names
    assert "memory_search" in names and "memory_remember" in names
    assert "memory_forget" not in names  # the agent never enabled it (P2)
    found = by_id[3]["result"]["structuredContent"]
    assert [m["turn_id"] for m in found["matches"]] == [turn]  # its own conversation (H6)
    recalled = by_id[4]["result"]["structuredContent"]
    assert [n["text"] for n in recalled["notes"]] == ["Plays the cello."]
    remembered = by_id[5]["result"]["structuredContent"]
    assert remembered["status"] == "pending"  # W6: a person approves it first
    assert by_id[6]["error"]["code"] == -32602  # not offered, so not callable
    assert by_id[7]["error"]["code"] == -32601
    assert 8 not in by_id  # responses are never answered
    assert by_id[9]["error"]["code"] == -32602
    unnumbered = [r["error"]["code"] for r in replies if r.get("id") is None]
    # a null id, the line that was not JSON, the nesting, the bytes that were not UTF-8
    assert unnumbered == [-32600, -32700, -32700, -32600]


def test_mcp_needs_its_attribution_from_the_host(store: Store, store_path: Path) -> None:
    store.close()
    env = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE}
    env.pop("ENGRAM_PERSON", None)
    env.pop("ENGRAM_CONVERSATION", None)
    command = [sys.executable, "-m", "engram", "--store", str(store_path)]
    command += ["--passphrase-env", "TEST_PASSPHRASE", "mcp"]
    done = subprocess.run(command, input="", capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1 and "--person and --conversation" in done.stderr
