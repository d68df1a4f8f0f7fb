"""Issues 10 and 16, done when: a host configured from the README works through the SDK
client.

Every "`engram mcp config …` prints:" block of the README's MCP section is what that
command prints here, but for the machine's own paths (the `engram` that runs and the
store). The Claude Desktop one is then launched exactly as the host would launch it, by
the SDK's stdio client with the environment it gives a server by default: no
conversation, no passphrase. The server unlocks the store from the keyring, here a file
keyring (tests/file_keyring.py) the subprocess loads through PYTHON_KEYRING_BACKEND,
because it cannot see the test's in-memory one.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from engram.control.notes import add_note
from engram.control.persons import ensure_person
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.agents import set_agent
from engram.store.keyring_access import SERVICE
from engram.store.store import Store
from tests.conftest import PASSPHRASE, MemoryKeyring
from tests.file_keyring import FILE_ENV

ROOT = Path(__file__).resolve().parents[2]
README_ENGRAM = "/home/ana/engram/.venv/bin/engram"
README_STORE = "/home/ana/.local/share/engram/default.engram"


def readme_configs() -> list[tuple[str, dict[str, Any]]]:
    """(command, printed configuration) for each such block of the README's MCP section."""
    text = (ROOT / "README.md").read_text()
    start = text.index("\n## MCP\n")
    section = text[start : text.index("\n## ", start + 1)]
    found = re.findall(r"`(engram mcp config [^`]*)` prints:\n\n```json\n(.*?)```", section, re.S)
    return [(command, json.loads(block)) for command, block in found]


def as_in_readme(printed: dict[str, Any], store_path: Path) -> dict[str, Any]:
    """The printed configuration with this machine's paths put back to the README's."""
    (server,) = next(iter(printed.values())).values()
    assert Path(server["command"]).is_absolute() and os.access(server["command"], os.X_OK)
    text = json.dumps(printed).replace(json.dumps(server["command"]), json.dumps(README_ENGRAM))
    return dict(json.loads(text.replace(json.dumps(str(store_path)), json.dumps(README_STORE))))


def test_issue16_item2_the_readme_shows_what_mcp_config_prints(
    store: Store, store_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One block per host, each exactly this command's output (paths aside); none holds a
    conversation id or a passphrase."""
    set_agent(store, "helper", {"memory": {"tools": {"search": True}}}, "ops")
    store.close()
    monkeypatch.setenv("ENGRAM_PASSPHRASE", PASSPHRASE)
    configs = readme_configs()
    hosts = [
        shlex.split(command)[shlex.split(command).index("--host") + 1] for command, _ in configs
    ]
    assert sorted(hosts) == ["claude-desktop", "cursor", "vscode"]
    for command, shown in configs:
        printed = cli(*shlex.split(command)[1:], "--store", str(store_path), passphrase=False)
        assert printed.code == 0, (command, printed.err)
        assert as_in_readme(printed.json(), store_path) == shown, command
        assert "--conversation" not in printed.out and PASSPHRASE not in printed.out


def test_issue10_done_a_host_configured_from_the_readme_works_through_the_sdk_client(
    store: Store, store_path: Path, test_keyring: MemoryKeyring, tmp_path: Path, cli: Any
) -> None:
    ana = PersonId("ana")
    set_agent(store, "helper", {"memory": {"tools": {"search": True, "forget": True}}}, "ops")
    ensure_person(store, ana)
    add_note(PersonSession(store, ana, ana), "Plays the cello.", Kind.FACT, Scope.DIRECT)
    keyring_file = tmp_path / "keyring.json"
    # The store's key, as `engram init` left it in the (test) OS keyring.
    secret = test_keyring.items[(SERVICE, store.info.id)]  # (beside it: the checkpoint anchor)
    keyring_file.write_text(json.dumps({f"{SERVICE}/{store.info.id}": secret}))
    store.close()

    command = next(c for c, _ in readme_configs() if "claude-desktop" in c)
    printed = cli(*shlex.split(command)[1:], "--store", str(store_path), passphrase=False)
    assert printed.code == 0, printed.err
    (server,) = printed.json()["mcpServers"].values()
    assert "--passphrase-env" not in server["args"]  # the README's point: no passphrase
    env = get_default_environment()  # no venv on the host's PATH: the command is absolute
    env.update(
        PYTHON_KEYRING_BACKEND="tests.file_keyring.FileKeyring",
        PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p),
        **{FILE_ENV: str(keyring_file)},
    )
    params = StdioServerParameters(command=server["command"], args=server["args"], env=env)

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
            block = await session.read_resource("engram://memory/block")
            (contents,) = block.contents
            assert isinstance(contents, types.TextResourceContents)
            assert "Plays the cello." in contents.text

    anyio.run(scenario)
