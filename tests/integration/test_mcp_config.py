"""`engram mcp config --host claude-desktop|vscode|cursor`: a desktop host set up in one
command (issue 16 item 2). The configuration names what actually runs and the store by
absolute path, names where the passphrase comes from but never holds it, and `--write`
merges into the host's own file after a backup, keeping everything else, or refuses in
one sentence and writes nothing."""

from __future__ import annotations

import json
import os
import sys
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
from engram.store import journal
from engram.store.store import Store
from tests.conftest import PASSPHRASE

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own, where the hosts keep their files on Linux."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder / ".config"))
    return folder


def _server(document: dict[str, Any]) -> dict[str, Any]:
    (servers,) = [v for k, v in document.items() if k in ("mcpServers", "servers")]
    return dict(servers["engram"])


def test_issue16_item2_config_names_what_runs_and_the_store_by_absolute_path(
    store: Store, store_path: Path, cli: Any
) -> None:
    """The command is the `engram` beside the running interpreter (the venv's, not
    whatever the host's PATH finds) and the store its absolute path; the passphrase's
    variable is named and filled by the host, the passphrase itself appears nowhere."""
    store.close()
    for host in ("vscode", "cursor"):
        done = cli("mcp", "config", "--host", host, "--person", "ana")
        assert done.code == 0, done.err
        server = _server(done.json())
        command = Path(server["command"])
        assert command.is_absolute() and os.access(command, os.X_OK)
        assert command.parent == Path(os.path.abspath(sys.executable)).parent
        args = server["args"]
        assert args[args.index("--store") + 1] == str(store_path)
        assert args[args.index("--person") + 1] == "ana"
        assert args[args.index("--passphrase-env") + 1] == "TEST_PASSPHRASE"
        assert "TEST_PASSPHRASE" in server["env"] and PASSPHRASE not in done.out
        assert "--conversation" not in args  # the session starts its own


def test_issue16_item2_config_creates_the_person_once_and_says_so(
    store: Store, store_path: Path, cli: Any
) -> None:
    store.close()
    first = cli("mcp", "config", "--host", "cursor", "--person", "zoe")
    again = cli("mcp", "config", "--host", "cursor", "--person", "zoe")
    assert first.code == again.code == 0
    assert first.err == "zoe is new in this store: created them.\n" and again.err == ""
    assert [p["id"] for p in cli("persons", "--json").json()] == ["zoe"]


def test_issue16_item2_claude_desktop_refuses_a_passphrase_it_could_only_write_down(
    store: Store, cli: Any, home: Path
) -> None:
    store.close()
    done = cli("mcp", "config", "--host", "claude-desktop", "--person", "ana", "--write")
    assert done.code == 1 and done.out == "" and done.err.count("\n") == 1
    assert "keyring" in done.err
    assert not (home / ".config" / "Claude").exists()


def test_issue16_item2_write_merges_into_the_hosts_file_after_a_backup(
    store: Store, cli: Any, home: Path
) -> None:
    """Claude Desktop's file on Linux: other servers and settings stay; the backup is the
    old file byte for byte; writing the same again changes nothing and backs up nothing."""
    store.close()
    target = home / ".config" / "Claude" / "claude_desktop_config.json"
    target.parent.mkdir(parents=True)
    old = '{"globalShortcut": "Ctrl+Space", "mcpServers": {"files": {"command": "/bin/fs"}}}'
    target.write_text(old)
    args = ("mcp", "config", "--host", "claude-desktop", "--person", "ana", "--write")
    done = cli(*args, passphrase=False)  # the store's key is in the (test) keyring
    assert done.code == 0, done.err
    assert done.out.startswith(f"Added the 'engram' server in {target} (the old file is kept")
    merged = json.loads(target.read_text())
    assert merged["globalShortcut"] == "Ctrl+Space"
    assert merged["mcpServers"]["files"] == {"command": "/bin/fs"}
    assert "--person" in merged["mcpServers"]["engram"]["args"]
    (backup,) = target.parent.glob("claude_desktop_config.json.*.bak")
    assert backup.read_text() == old
    again = cli(*args, passphrase=False)
    assert again.code == 0 and "nothing changed" in again.out
    assert len(list(target.parent.glob("*.bak"))) == 1


@pytest.mark.parametrize(
    ("host", "where"),
    [
        ("claude-desktop", ".config/Claude/claude_desktop_config.json"),
        ("vscode", ".config/Code/User/mcp.json"),
        ("cursor", ".cursor/mcp.json"),
    ],
)
def test_issue16_item2_write_refuses_a_file_that_is_not_json_and_leaves_it(
    store: Store, cli: Any, home: Path, host: str, where: str
) -> None:
    """Each host's own file (on Linux); a file with comments or a stray comma is not
    rewritten, not backed up, and the command says so in one sentence."""
    store.close()
    target = home / where
    target.parent.mkdir(parents=True)
    broken = '{\n  // my servers\n  "servers": {},\n}\n'
    target.write_text(broken)
    done = cli("mcp", "config", "--host", host, "--person", "ana", "--write", passphrase=False)
    assert done.code == 1 and done.err.count("\n") == 1, done.err
    assert f"{target} is not valid JSON (line 2" in done.err and "left as it was" in done.err
    assert target.read_text() == broken
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]


def test_issue16_item2_a_store_that_will_not_open_writes_no_configuration(
    store: Store, store_path: Path, cli: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The configuration must work as written: a passphrase variable that is not set here
    is refused before anything is printed or written."""
    store.close()
    monkeypatch.delenv("TEST_PASSPHRASE")
    done = cli("mcp", "config", "--host", "cursor", "--person", "ana", "--write")
    assert done.code == 1 and "TEST_PASSPHRASE" in done.err and done.out == ""
    assert not (home / ".cursor").exists()


def test_issue16_item2_vscode_asks_for_the_passphrase_and_the_server_it_starts_works(
    store: Store, store_path: Path, cli: Any, tmp_path: Path
) -> None:
    """A workspace's .vscode/mcp.json that already has an input and a server keeps both;
    the server VS Code starts from it, with the passphrase it asked for in the named
    variable, serves Ana without any conversation given."""
    ana = PersonId("ana")
    ensure_person(store, ana)
    add_note(PersonSession(store, ana, ana), "Plays the cello.", Kind.FACT, Scope.DIRECT)
    store.close()
    target = tmp_path / "workspace" / ".vscode" / "mcp.json"
    target.parent.mkdir(parents=True)
    target.write_text(
        json.dumps(
            {
                "inputs": [{"type": "promptString", "id": "gh-token", "description": "token"}],
                "servers": {"github": {"type": "http", "url": "https://example.invalid/mcp"}},
            }
        )
    )
    args = ("mcp", "config", "--host", "vscode", "--person", "ana", "--write", "--file")
    done = cli(*args, str(target), "--json")
    assert done.code == 0, done.err
    assert done.json()["replaced"] is False and Path(done.json()["backup"]).exists()
    written = json.loads(target.read_text())
    assert [i["id"] for i in written["inputs"]] == ["gh-token", "engram-passphrase"]
    assert set(written["servers"]) == {"github", "engram"}
    server = written["servers"]["engram"]
    assert PASSPHRASE not in target.read_text()

    # What VS Code does: fill ${input:…} with what the person typed, start the command.
    env = get_default_environment()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p)
    for name, value in server["env"].items():
        assert value == "${input:engram-passphrase}"
        env[name] = PASSPHRASE
    params = StdioServerParameters(command=server["command"], args=server["args"], env=env)

    async def scenario() -> None:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, read_timeout_seconds=30) as session,
        ):
            await session.initialize()
            recalled = await session.call_tool("memory_recall", {})
            assert not recalled.is_error and recalled.structured_content is not None
            assert [n["text"] for n in recalled.structured_content["notes"]] == ["Plays the cello."]
            got = await session.get_prompt("memory_block")
            (message,) = got.messages
            assert isinstance(message.content, types.TextContent)
            assert "Plays the cello." in message.content.text

    anyio.run(scenario)
    reopened = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        with reopened.read() as conn:
            assert journal.person_exists(conn, ana)
    finally:
        reopened.close()
