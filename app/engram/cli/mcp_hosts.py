"""`engram mcp config`: what each desktop host's configuration for `engram mcp` looks like,
where the host keeps it, and merging one server into that file.

Each host documents its own format: Claude Desktop and Cursor keep servers under
`mcpServers`; VS Code's mcp.json keeps them under `servers`, with `inputs` for values it
asks the person for once and keeps in its secret storage. The configuration holds
absolute paths (the host's PATH is not the shell's) and names where the passphrase comes
from, never the passphrase itself.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from engram.model.errors import InvalidInput, NotAllowed

HOSTS = ("claude-desktop", "vscode", "cursor")
PASSPHRASE_INPUT = "engram-passphrase"


@dataclass(frozen=True)
class ServerLaunch:
    """What the host runs: the executable, its arguments, and the passphrase's variable."""

    command: str
    args: list[str]
    passphrase_env: str | None


def engram_command() -> list[str]:
    """The absolute command that runs this Engram: the `engram` script beside the running
    interpreter (a venv's bin/ or Scripts/), the bundle itself, or `python -m engram`."""
    # abspath, not resolve: a venv's python is a symlink, and following it leaves the venv.
    executable = os.path.abspath(sys.executable)
    if getattr(sys, "frozen", False):
        return [executable]
    folder = Path(executable).parent
    for name in ("engram", "engram.exe"):
        script = folder / name
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script)]
    return [executable, "-m", "engram"]


def store_argument(url: str) -> str:
    """The store as the host's configuration names it: a SQLite file's absolute path, or
    the URL of a database server, which must not carry a password."""
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///")
    if urlsplit(url).password:
        raise InvalidInput(
            "The store's URL carries a database password, which would be written into the "
            "host's configuration; give a URL without it (PostgreSQL reads PGPASSWORD or "
            "~/.pgpass)."
        )
    return url


def launch(
    store: str,
    person: str,
    agent: str | None,
    allow_tools: str | None,
    passphrase_env: str | None,
) -> ServerLaunch:
    """The command line the host starts: `engram mcp` for this store and person."""
    command, *prefix = engram_command()
    args = [*prefix, "mcp", "--store", store, "--person", person]
    if agent:
        args += ["--agent", agent]
    if allow_tools:
        args += ["--allow-tools", allow_tools]
    if passphrase_env:
        args += ["--passphrase-env", passphrase_env]
    return ServerLaunch(command, args, passphrase_env)


def host_config(host: str, name: str, server: ServerLaunch) -> dict[str, Any]:
    """The host's configuration document holding this one server."""
    entry: dict[str, Any] = {"command": server.command, "args": server.args}
    variable = server.passphrase_env
    if host == "claude-desktop":
        if variable:
            raise NotAllowed(
                "Claude Desktop can hand a server a passphrase only by writing it into its "
                "configuration file, so keep the store's key in the OS keyring instead "
                "(leave out --passphrase-env; 'engram desk' can remember the key on this "
                "computer)."
            )
        return {"mcpServers": {name: entry}}
    if host == "cursor":
        if variable:
            entry["env"] = {variable: "${env:" + variable + "}"}  # Cursor's own environment
        return {"mcpServers": {name: entry}}
    document: dict[str, Any] = {"servers": {name: {"type": "stdio", **entry}}}
    if variable:
        # VS Code asks for it once and keeps it in its secret storage, not in this file.
        document["servers"][name]["env"] = {variable: "${input:" + PASSPHRASE_INPUT + "}"}
        document["inputs"] = [
            {
                "type": "promptString",
                "id": PASSPHRASE_INPUT,
                "description": "Passphrase of the Engram store",
                "password": True,
            }
        ]
    return document


def default_file(host: str, platform: str = sys.platform) -> Path:
    """Where the host reads its configuration for every workspace (the user's own), as
    each host documents it for macOS, Windows and Linux."""
    home = Path.home()
    if host == "cursor":
        return home / ".cursor" / "mcp.json"
    if platform == "darwin":
        folder = home / "Library" / "Application Support"
    elif platform == "win32":
        folder = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        folder = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    if host == "claude-desktop":
        return folder / "Claude" / "claude_desktop_config.json"
    return folder / "Code" / "User" / "mcp.json"


@dataclass(frozen=True)
class Merge:
    """A host document merged into a file's current content, not yet written."""

    file: Path
    existing: dict[str, Any]
    merged: dict[str, Any]
    replaced: bool

    @property
    def changed(self) -> bool:
        """Whether writing would change the file."""
        return not self.file.exists() or self.merged != self.existing


def plan_merge(path: Path, addition: dict[str, Any]) -> Merge:
    """`addition` (one host document) merged into the file at `path`, keeping everything
    else in it; InvalidInput, before anything is written, when the file cannot be read as
    a JSON object."""
    existing = _read_object(path)
    merged = json.loads(json.dumps(existing))  # a deep copy
    replaced = False
    for section, value in addition.items():
        if section == "inputs":
            _merge_inputs(path, merged, value)
            continue
        held = merged.setdefault(section, {})
        if not isinstance(held, dict):
            raise InvalidInput(
                f"{path} holds {section!r} as something other than a JSON object, so it was "
                "left as it was; fix that entry and run this again."
            )
        for name, entry in value.items():
            replaced = replaced or name in held
            held[name] = entry
    return Merge(path, existing, merged, replaced)


def write_merge(plan: Merge) -> Path | None:
    """Write the merged file (the old one copied beside it first); returns the backup."""
    if not plan.changed:
        return None
    backup = _back_up(plan.file) if plan.file.exists() else None
    _write_atomically(plan.file, json.dumps(plan.merged, indent=2, ensure_ascii=False) + "\n")
    return backup


def _read_object(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    left = "so it was left as it was; fix it, or move it aside, and run this again"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text, {left}.") from None
    except OSError as error:
        raise InvalidInput(f"{path} cannot be read ({error.strerror}), {left}.") from None
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise InvalidInput(f"{path} is not valid JSON ({where}: {error.msg}), {left}.") from None
    if not isinstance(value, dict):
        raise InvalidInput(f"{path} does not hold a JSON object, {left}.")
    return value


def _merge_inputs(path: Path, merged: dict[str, Any], inputs: list[dict[str, Any]]) -> None:
    held = merged.setdefault("inputs", [])
    if not isinstance(held, list):
        raise InvalidInput(
            f"{path} holds 'inputs' as something other than a list, so it was left as it "
            "was; fix that entry and run this again."
        )
    for item in inputs:
        ids = [old.get("id") if isinstance(old, dict) else None for old in held]
        if item["id"] in ids:
            held[ids.index(item["id"])] = item
        else:
            held.append(item)


def _back_up(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    backup = path.with_name(f"{path.name}.{stamp}.bak")
    count = 1
    while backup.exists():
        count += 1
        backup = path.with_name(f"{path.name}.{stamp}-{count}.bak")
    shutil.copy2(path, backup)
    return backup


def _write_atomically(path: Path, text: str) -> None:
    """The whole new file or the old one, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if path.exists():
            shutil.copymode(path, temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
