"""Issue 20 items 1 and 12: `engram desk --install-desktop-entry` puts the desktop entry
(Exec= the absolute path of this engram, MimeType= the store type), the icons, the MIME type
and the metainfo into $XDG_DATA_HOME; they validate, the desktop's databases know them, and
`--uninstall-desktop-entry` removes exactly those files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engram.gui.resources import APP_ID, ICON_SIZES

ROOT = Path(__file__).resolve().parents[2]


def _engram(data_home: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(data_home),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "app"), str(ROOT)]),
    }
    env.pop("QT_QPA_PLATFORM", None)
    env.pop("DISPLAY", None)  # no Qt, no display: it works on a headless machine too
    return subprocess.run(
        [sys.executable, "-m", "engram", "desk", *arguments],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def _files(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*") if p.is_file()}


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (packaging/bootstrap.sh --for test installs it)")
    return path


def test_issue20_item1_install_puts_every_file_and_uninstall_takes_exactly_them(
    tmp_path: Path,
) -> None:
    home = tmp_path / "share"
    (home / "applications").mkdir(parents=True)
    other = home / "applications" / "someone-else.desktop"  # not ours: stays
    other.write_text("[Desktop Entry]\nType=Application\nName=Other\nExec=other\n")
    before = _files(home)
    done = _engram(home, "--install-desktop-entry", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    command = Path(report["command"])
    assert command.is_absolute() and command.name == "engram" and command.is_file()
    ours = {
        Path("applications") / f"{APP_ID}.desktop",
        Path("metainfo") / f"{APP_ID}.metainfo.xml",
        Path("mime") / "packages" / f"{APP_ID}.xml",
        Path("icons") / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg",
        *(Path("icons") / "hicolor" / f"{n}x{n}" / "apps" / f"{APP_ID}.png" for n in ICON_SIZES),
    }
    assert {Path(p).relative_to(home) for p in report["installed"]} == ours
    assert ours <= _files(home)
    entry = (home / "applications" / f"{APP_ID}.desktop").read_text()
    assert f"\nExec={command} desk %f\n" in entry
    assert f"\nTryExec={command}\n" in entry
    assert "\nMimeType=application/x-engram-store;\n" in entry
    checked = subprocess.run(
        [_tool("desktop-file-validate"), str(home / "applications" / f"{APP_ID}.desktop")],
        capture_output=True,
        text=True,
    )
    problems = [line for line in checked.stdout.splitlines() if ": hint:" not in line]
    assert checked.returncode == 0 and problems == [], checked.stdout + checked.stderr
    # The desktop's databases were rebuilt: a .engram file opens with the inspector.
    _tool("update-mime-database")
    assert "application/x-engram-store:*.engram" in (home / "mime" / "globs2").read_text()
    mimeinfo = (home / "applications" / "mimeinfo.cache").read_text()
    assert f"application/x-engram-store={APP_ID}.desktop;" in mimeinfo

    done = _engram(home, "--uninstall-desktop-entry", "--json")
    assert done.returncode == 0, done.stderr
    assert {Path(p).relative_to(home) for p in json.loads(done.stdout)["removed"]} == ours
    left = _files(home)
    assert not left & ours and before <= left and other.is_file()
    # What is left is what the freedesktop tools derive, rebuilt without Engram's type.
    derived = left - before
    assert all(p.parts[0] == "mime" or p.name == "mimeinfo.cache" for p in derived), derived
    for path in derived:
        assert b"engram" not in (home / path).read_bytes(), path
    assert not (home / "icons").exists()  # folders it made and left empty are gone


def test_issue20_item1_uninstall_without_an_install_says_so(tmp_path: Path) -> None:
    done = _engram(tmp_path / "share", "--uninstall-desktop-entry")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("No desktop entry was installed.")


def test_issue20_item1_an_installed_command_is_named_by_its_own_path(tmp_path: Path) -> None:
    """Run as a console script (pipx's ~/.local/bin/engram, say), Exec= names that script."""
    script = tmp_path / "bin" / "engram"
    script.parent.mkdir()
    script.write_text(
        f"#!{sys.executable}\nimport sys\nfrom engram.cli.main import run\nsys.exit(run())\n"
    )
    script.chmod(0o755)
    home = tmp_path / "share"
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(home),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "app"), str(ROOT)]),
    }
    done = subprocess.run(
        [str(script), "desk", "--install-desktop-entry"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"Installed the desktop entry for {script}:"
    entry = (home / "applications" / f"{APP_ID}.desktop").read_text()
    assert f"\nExec={script} desk %f\n" in entry
