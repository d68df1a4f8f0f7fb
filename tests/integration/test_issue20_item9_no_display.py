"""Issue 20 item 9: no display, said plainly.

Without a display `engram desk` exits with its own documented code (4, not the usage
mistake's 2), prints the full path of the command that opens the window where there is a
display and of the commands that show the same things here, and never tells anyone to open
a window nobody can see. The run command installs every library Qt's X11 window links.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engram.cli import no_display

ROOT = Path(__file__).resolve().parents[2]
NO_DISPLAY_ENV = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")


def _desk(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in NO_DISPLAY_ENV}
    env["ENGRAM_NO_SUCH_PASSPHRASE"] = "x"
    return subprocess.run(
        [sys.executable, "-m", "engram", *arguments],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )


def test_issue20_item9_desk_without_a_display_exits_4_with_full_paths(tmp_path: Path) -> None:
    done = _desk(
        tmp_path,
        "--passphrase-env",
        "ENGRAM_NO_SUCH_PASSPHRASE",
        "--actor",
        "staff:demo",
        "desk",
        "relative.engram",  # given relative: printed absolute
        "--person",
        "maya",
    )
    assert done.returncode == no_display.EXIT_NO_DISPLAY == 4, done.stderr
    text = done.stderr
    assert "Traceback" not in text and done.stdout == ""
    assert text.startswith("There is no display here")
    store = str(tmp_path / "relative.engram")
    # The command that opens the window where a display is: absolute, runnable as printed.
    opens = [line.strip() for line in text.splitlines() if " desk " in line]
    assert len(opens) == 1
    words = shlex.split(opens[0])
    assert Path(words[0]).is_absolute() and os.access(words[0], os.X_OK)
    assert words[1:] == [
        "--passphrase-env",
        "ENGRAM_NO_SUCH_PASSPHRASE",
        "--actor",
        "staff:demo",
        "desk",
        store,
        "--person",
        "maya",
    ]
    # ... and what the command line offers, through the same absolute command and store.
    prefix = re.search(r"^  E=(.+)$", text, re.MULTILINE)
    assert prefix is not None
    e = shlex.split(shlex.split(prefix.group(1))[0])
    assert e == [words[0], "--store", store, "--passphrase-env", "ENGRAM_NO_SUCH_PASSPHRASE"]
    for command in ("persons", "notes list --person maya --all", "audit --person maya", "verify"):
        assert f"$E {command} " in text
    # Never the advice to open a window nobody can see: xvfb-run is named only for
    # automated checks, never in the command given to open the window.
    assert "xvfb-run" not in opens[0] and "xvfb-run -a engram" not in text
    installed = shutil.which("xvfb-run")
    if installed:
        assert f"xvfb-run is installed here ({installed})" in " ".join(text.split())
    else:
        assert "sudo apt-get install xvfb xauth" in " ".join(text.split())


def test_issue20_item9_no_display_under_json_is_an_error_document(tmp_path: Path) -> None:
    done = _desk(tmp_path, "desk", "x.engram", "--json")
    assert done.returncode == 4
    assert '"error": "There is no display here' in done.stdout


def test_issue20_item9_says_how_to_install_xvfb_when_it_is_missing() -> None:
    import argparse

    args = argparse.Namespace(passphrase_env=None, passphrase_file=None, actor=None, person=None)
    text = " ".join(no_display.message(args, "/tmp/s.engram", xvfb_run="").split())
    assert "xvfb-run is not installed here; on Debian or Ubuntu: sudo apt-get install xvfb" in text


def test_issue20_item9_exit_code_is_documented() -> None:
    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "4 when `desk` finds no display" in " ".join(reference.split())


def _run_packages() -> set[str]:
    script = (ROOT / "packaging" / "bootstrap.sh").read_text(encoding="utf-8")
    found = re.search(r"^run_packages=\((.*?)\)", script, re.MULTILINE | re.DOTALL)
    assert found is not None
    return set(found.group(1).split())


def _owner(library: str) -> str | None:
    done = subprocess.run(
        ["dpkg", "-S", os.path.realpath(library)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:  # /lib vs /usr/lib on a merged-/usr system
        done = subprocess.run(["dpkg", "-S", library], capture_output=True, text=True, check=False)
    return done.stdout.split(":")[0] if done.returncode == 0 else None


@pytest.mark.skipif(shutil.which("dpkg") is None, reason="needs Debian's dpkg")
def test_issue20_item9_run_packages_hold_every_library_the_x11_window_links() -> None:
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt"
    plugins = [
        qt / "plugins" / "platforms" / "libqxcb.so",
        qt / "lib" / "libQt6XcbQpa.so.6",
        *sorted((qt / "plugins" / "xcbglintegrations").glob("*.so")),
    ]
    listed = _run_packages()
    missing: list[str] = []
    unlisted: set[str] = set()
    for plugin in plugins:
        linked = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, check=True)
        for line in linked.stdout.splitlines():
            name, _, where = line.strip().partition(" => ")
            if where.startswith("not found"):
                missing.append(f"{plugin.name}: {name}")
            elif re.match(r"lib(xcb|X11|xkbcommon)", name) and where.startswith("/"):
                owner = _owner(where.split(" (")[0])
                if owner is not None and owner not in listed:
                    unlisted.add(owner)
    assert missing == [], "bash packaging/bootstrap.sh --for run leaves these out"
    assert unlisted == set(), "bootstrap.sh's run_packages should name these"


def test_issue20_item9_the_command_is_absolute_however_engram_was_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "engram"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setattr(sys, "argv", ["engram", "desk"])  # found on PATH, by its bare name
    assert no_display.engram_command() == [str(script)]
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "argv", ["./engram", "desk"])  # relative to where it ran
    assert no_display.engram_command() == [str(script)]
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "x" / "__main__.py"), "desk"])  # -m
    command = no_display.engram_command()
    assert all(Path(word).is_absolute() for word in command[:1])
    assert command[-2:] == ["-m", "engram"] or Path(command[0]).name == "engram"
