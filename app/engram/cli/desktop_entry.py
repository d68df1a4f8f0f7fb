"""`engram desk --install-desktop-entry` / `--uninstall-desktop-entry` (issue 20 items 1, 12):
the desktop entry, icons, MIME type and metainfo into the user's XDG data folder
($XDG_DATA_HOME, or ~/.local/share), from the package's own copies (engram/data), with
Exec= the absolute path of the `engram` that runs this. A wheel installed into a venv or with
pipx cannot do this by itself: its data files land inside that environment, where no desktop
looks. Uninstalling removes the same files and nothing else; the caches the freedesktop tools
derive from them (mimeinfo.cache, mime/…) are rebuilt without them.

No Qt here: it runs where no display is.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engram.control import package_data as resources
from engram.control.package_data import APP_ID
from engram.model.errors import InvalidInput

_SAFE = re.compile(r"[A-Za-z0-9_./+:@%,-]+")


@dataclass(frozen=True)
class Placement:
    """One file the desktop entry brings: where it goes and what it holds."""

    target: Path
    content: Callable[[], bytes]


@dataclass
class Outcome:
    """What an install or uninstall did."""

    command: Path | None
    files: list[Path] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)  # the cache tools that ran

    def as_json(self, key: str) -> dict[str, object]:
        return {
            key: [str(p) for p in self.files],
            "command": None if self.command is None else str(self.command),
            "updated": self.updated,
        }


def data_home() -> Path:
    """$XDG_DATA_HOME when it is an absolute path (the spec ignores a relative one), else
    ~/.local/share."""
    value = os.environ.get("XDG_DATA_HOME", "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / ".local" / "share"


def engram_command() -> Path:
    """The absolute path of the `engram` running now: the bundle's executable, the console
    script this was started as, or the one beside the interpreter (`python -m engram`)."""
    if getattr(sys, "frozen", False):
        return Path(sys.executable).absolute()
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if started is not None and started.name == "engram" and started.is_file():
        return Path(os.path.abspath(started))  # a pipx link stays a link: upgrades keep it
    beside = Path(sys.executable).parent / "engram"
    if beside.is_file():
        return Path(os.path.abspath(beside))
    raise InvalidInput(
        "Cannot tell where the engram command is installed; run this as that command "
        "(for example ~/.local/bin/engram desk --install-desktop-entry)."
    )


def _exec_argument(path: Path) -> str:
    """A path as a desktop-entry Exec argument (quoted and escaped when it must be)."""
    text = str(path)
    if _SAFE.fullmatch(text):
        return text
    quoted = re.sub(r'(["`$\\])', r"\\\1", text)
    return '"' + quoted.replace("\\", "\\\\") + '"'  # the value itself escapes backslashes


def desktop_entry(command: Path) -> bytes:
    """The packaged desktop entry with Exec= and TryExec= pointing at `command`."""
    lines = []
    for line in resources.desktop_file(".desktop").read_text(encoding="utf-8").splitlines():
        if line.startswith("Exec="):
            line = f"Exec={_exec_argument(command)} desk %f"
        elif line.startswith("TryExec="):
            line = f"TryExec={command}"
        lines.append(line)
    return ("\n".join(lines) + "\n").encode("utf-8")


def placements(home: Path, command: Path | None) -> list[Placement]:
    """Every file the desktop integration consists of, under `home`."""
    found = resources.find()

    def read(path: Path) -> Callable[[], bytes]:
        return path.read_bytes

    icons = home / "icons" / "hicolor"
    wanted = [
        Placement(
            home / "applications" / f"{APP_ID}.desktop",
            (lambda: desktop_entry(command)) if command is not None else bytes,
        ),
        Placement(
            home / "metainfo" / f"{APP_ID}.metainfo.xml",
            read(resources.desktop_file(".metainfo.xml")),
        ),
        Placement(
            home / "mime" / "packages" / f"{APP_ID}.xml", read(resources.desktop_file(".mime.xml"))
        ),
        Placement(icons / "scalable" / "apps" / f"{APP_ID}.svg", read(found.svg)),
    ]
    wanted += [
        Placement(icons / png.parent.parent.name / "apps" / png.name, read(png))
        for png in found.icon_files()
    ]
    return wanted


def _refresh(home: Path) -> list[str]:
    """Rebuild the caches the desktop reads, with the tools that are installed."""
    ran = []
    for tool, folder in (
        ("update-desktop-database", home / "applications"),
        ("update-mime-database", home / "mime"),
    ):
        path = shutil.which(tool)
        if path is None or not folder.is_dir():
            continue
        arguments = [path, "-q", str(folder)] if tool == "update-desktop-database" else []
        done = subprocess.run(
            arguments or [path, str(folder)], capture_output=True, text=True, check=False
        )
        if done.returncode == 0:
            ran.append(tool)
    return ran


def install(home: Path | None = None, command: Path | None = None) -> Outcome:
    """Write every file (replacing an older copy), then refresh the desktop's caches."""
    home = data_home() if home is None else home
    command = engram_command() if command is None else command
    outcome = Outcome(command)
    for placement in placements(home, command):
        placement.target.parent.mkdir(parents=True, exist_ok=True)
        partial = placement.target.with_name(placement.target.name + ".part")
        partial.write_bytes(placement.content())
        partial.chmod(0o644)
        os.replace(partial, placement.target)
        outcome.files.append(placement.target)
    outcome.updated = _refresh(home)
    return outcome


def uninstall(home: Path | None = None) -> Outcome:
    """Remove the files install() writes (those that are there) and folders left empty."""
    home = data_home() if home is None else home
    outcome = Outcome(None)
    for placement in placements(home, None):
        if placement.target.is_file():
            placement.target.unlink()
            outcome.files.append(placement.target)
            _prune(placement.target.parent, home)
    outcome.updated = _refresh(home)
    return outcome


def _prune(folder: Path, home: Path) -> None:
    """Remove empty folders from `folder` up to (not including) `home`; mime/packages stays,
    since update-mime-database rebuilds the database from it (without our type)."""
    while folder not in (home, home / "mime" / "packages") and home in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
