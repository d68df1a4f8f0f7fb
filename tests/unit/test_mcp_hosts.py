"""Where each desktop host keeps its MCP configuration and what runs Engram from it
(issue 16 item 2: `engram mcp config`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from engram.cli import mcp_hosts
from engram.model.errors import InvalidInput, NotAllowed


@pytest.mark.parametrize(
    ("host", "platform", "where"),
    [
        (
            "claude-desktop",
            "darwin",
            "home/Library/Application Support/Claude/claude_desktop_config.json",
        ),
        ("claude-desktop", "win32", "roaming/Claude/claude_desktop_config.json"),
        ("claude-desktop", "linux", "xdg/Claude/claude_desktop_config.json"),
        ("vscode", "darwin", "home/Library/Application Support/Code/User/mcp.json"),
        ("vscode", "win32", "roaming/Code/User/mcp.json"),
        ("vscode", "linux", "xdg/Code/User/mcp.json"),
        ("cursor", "darwin", "home/.cursor/mcp.json"),
        ("cursor", "win32", "home/.cursor/mcp.json"),
        ("cursor", "linux", "home/.cursor/mcp.json"),
    ],
)
def test_issue16_item2_each_hosts_own_file_on_each_platform(
    host: str, platform: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("APPDATA", str(tmp_path / "roaming"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert mcp_hosts.default_file(host, platform) == tmp_path / where


def test_issue16_item2_linux_without_xdg_config_home_uses_dot_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    expected = tmp_path / ".config" / "Claude" / "claude_desktop_config.json"
    assert mcp_hosts.default_file("claude-desktop", "linux") == expected


def test_issue16_item2_the_command_is_the_venvs_engram_even_through_a_symlinked_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A venv's python is a symlink to the system's; following it would name an `engram`
    outside the venv (or none), so the path is made absolute, not resolved."""
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    script = bin_dir / "engram"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    assert mcp_hosts.engram_command() == [str(script)]
    script.unlink()  # no console script (a source checkout): the interpreter runs the module
    assert mcp_hosts.engram_command() == [str(bin_dir / "python"), "-m", "engram"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # the PyInstaller bundle
    assert mcp_hosts.engram_command() == [str(bin_dir / "python")]


def test_issue16_item2_a_relative_interpreter_path_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "executable", "python3")
    assert mcp_hosts.engram_command()[0] == os.path.join(str(tmp_path), "python3")


def test_issue16_item2_the_store_is_named_without_a_database_password() -> None:
    assert mcp_hosts.store_argument("sqlite:////home/ana/s.engram") == "/home/ana/s.engram"
    url = "postgresql+psycopg://ana@db.internal/engram"
    assert mcp_hosts.store_argument(url) == url
    with pytest.raises(InvalidInput, match="database password"):
        mcp_hosts.store_argument("postgresql+psycopg://ana:secret@db.internal/engram")


def test_issue16_item2_a_passphrase_variable_is_named_never_filled() -> None:
    server = mcp_hosts.launch("/s.engram", "ana", None, None, "ENGRAM_PASSPHRASE")
    vscode = mcp_hosts.host_config("vscode", "engram", server)
    assert vscode["servers"]["engram"]["env"] == {"ENGRAM_PASSPHRASE": "${input:engram-passphrase}"}
    assert vscode["inputs"][0]["password"] is True
    cursor = mcp_hosts.host_config("cursor", "engram", server)
    assert cursor["mcpServers"]["engram"]["env"] == {
        "ENGRAM_PASSPHRASE": "${env:ENGRAM_PASSPHRASE}"
    }
    with pytest.raises(NotAllowed, match="keyring"):
        mcp_hosts.host_config("claude-desktop", "engram", server)
    keyring = mcp_hosts.launch("/s.engram", "ana", None, None, None)
    assert "env" not in mcp_hosts.host_config("cursor", "engram", keyring)["mcpServers"]["engram"]
