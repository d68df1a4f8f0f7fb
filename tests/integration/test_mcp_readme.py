"""Issue 10, done when: a host configured from the README works through the SDK client.

The README's Claude Desktop block (its MCP section) is read as JSON; only the store path,
person and conversation placeholders are replaced; the SDK's stdio client launches exactly
that command and those arguments — `engram` found on PATH, with the environment the SDK
gives a server by default — and calls tools. No passphrase is given: the server unlocks
the store from the keyring, here a file keyring (tests/file_keyring.py) the subprocess
loads through PYTHON_KEYRING_BACKEND, because it cannot see the test's in-memory one.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.agents import set_agent
from engram.runtime.conversations import start_conversation
from engram.store.keyring_access import SERVICE
from engram.store.store import Store
from tests.conftest import MemoryKeyring
from tests.file_keyring import FILE_ENV

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDERS = ("--store", "--person", "--conversation")


def readme_claude_desktop() -> dict[str, Any]:
    """The `mcpServers` JSON block of the README's MCP section."""
    text = (ROOT / "README.md").read_text()
    start = text.index("\n## MCP\n")
    section = text[start : text.index("\n## ", start + 1)]
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", section, re.DOTALL)]
    (claude,) = [b for b in blocks if "mcpServers" in b]
    return dict(claude)


def with_real_values(args: list[str], values: dict[str, str]) -> list[str]:
    """The README's arguments with each placeholder flag's value replaced."""
    out = list(args)
    for flag, value in values.items():
        out[out.index(flag) + 1] = value
    return out


def test_issue10_done_a_host_configured_from_the_readme_works_through_the_sdk_client(
    store: Store, store_path: Path, test_keyring: MemoryKeyring, tmp_path: Path
) -> None:
    ana = PersonId("ana")
    set_agent(store, "helper", {"memory": {"tools": {"search": True, "forget": True}}}, "ops")
    conversation = start_conversation(store, [ana], agent="helper").id
    add_note(PersonSession(store, ana, ana), "Plays the cello.", Kind.FACT, Scope.DIRECT)
    keyring_file = tmp_path / "keyring.json"
    # The store's key, as `engram init` left it in the (test) OS keyring.
    secret = test_keyring.items[(SERVICE, store.info.id)]  # (beside it: the checkpoint anchor)
    keyring_file.write_text(json.dumps({f"{SERVICE}/{store.info.id}": secret}))
    store.close()

    (server,) = readme_claude_desktop()["mcpServers"].values()
    args = with_real_values(
        server["args"],
        {"--store": str(store_path), "--person": "ana", "--conversation": conversation},
    )
    changed = [i for i, (a, b) in enumerate(zip(server["args"], args, strict=True)) if a != b]
    assert all(server["args"][i - 1] in PLACEHOLDERS for i in changed)
    assert "--passphrase-env" not in args  # the README's point: no passphrase in the config
    env = get_default_environment()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(
        PYTHON_KEYRING_BACKEND="tests.file_keyring.FileKeyring",
        PYTHONPATH=str(ROOT),
        **{FILE_ENV: str(keyring_file)},
    )
    params = StdioServerParameters(command=server["command"], args=args, env=env)

    async def scenario() -> None:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, read_timeout_seconds=30) as session,
        ):
            await session.initialize()
            names = {t.name for t in (await session.list_tools()).tools}
            # The README's --allow-tools is the host's ceiling: forget is enabled but not allowed.
            assert "memory_search" in names and "memory_forget" not in names
            found = await session.call_tool("memory_search", {"query": "cello"})
            assert not found.is_error, found.content
            assert found.structured_content is not None
            assert [i["text"] for i in found.structured_content["items"]] == ["Plays the cello."]
            recalled = await session.call_tool("memory_recall", {})
            assert not recalled.is_error and recalled.structured_content is not None
            assert recalled.structured_content["status"] == "ok"
            text = recalled.content[0]
            assert isinstance(text, types.TextContent) and "cello" in text.text

    anyio.run(scenario)
