"""`engram desk` where there is no display (issue 20 item 9): say plainly that the window
cannot open here, give the full command that opens it where a display is, and what the
command line offers meanwhile; exit with the code of its own (EXIT_NO_DISPLAY), never the
usage mistake's 2.

No Qt here: it runs before Qt is loaded, and where Qt could not draw anyway.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

EXIT_NO_DISPLAY = 4
"""`engram desk` found no display to open its window on (docs/cli.md, "Exit codes")."""

# What Debian and Ubuntu call the packages xvfb-run needs.
XVFB_PACKAGES = ("xvfb", "xauth")
WIDTH = 88


def has_display(environ: dict[str, str] | None = None) -> bool:
    """Whether Qt has somewhere to draw: an X display, Wayland, or an explicit platform."""
    if sys.platform in ("darwin", "win32"):
        return True
    env = os.environ if environ is None else environ
    return any(env.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"))


def engram_command() -> list[str]:
    """The absolute command that runs this same `engram` (whatever PATH holds)."""
    launched = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if launched is not None and launched.name != "__main__.py":
        # As it was started: the venv's script, or /usr/bin/engram (a link, kept as such).
        found = shutil.which(str(launched)) if launched.parent == Path() else str(launched)
        if found and Path(found).is_file():
            return [str(Path(found).absolute())]
    if getattr(sys, "frozen", False):  # the PyInstaller bundle: its own executable
        return [str(Path(sys.executable).absolute())]
    beside = Path(sys.executable).parent / "engram"  # the venv's own script
    if beside.is_file():
        return [str(beside.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "engram"]


def _globals(args: argparse.Namespace, store: str) -> list[str]:
    """The global options that reach the same store the same way (never a passphrase)."""
    words = ["--store", store]
    for option, name in (
        ("--passphrase-env", "passphrase_env"),
        ("--passphrase-file", "passphrase_file"),
    ):
        value = getattr(args, name, None)
        if value:
            words += [option, str(Path(value).absolute()) if name.endswith("file") else value]
    return words


def _line(words: Sequence[str]) -> str:
    return "  " + shlex.join(words)


def message(args: argparse.Namespace, store: str, xvfb_run: str | None = None) -> str:
    """What `engram desk` prints without a display: full paths, nothing to guess."""
    engram = engram_command()
    store = str(Path(store).expanduser().absolute()) if "://" not in store else store
    reach = _globals(args, store)
    desk = [*engram, *reach[2:]]
    actor = getattr(args, "actor", None)
    if actor:
        desk += ["--actor", actor]
    desk += ["desk", store]
    person = getattr(args, "person", None)
    if person:
        desk += ["--person", person]
    who = person or "PERSON"
    offered = [
        (["persons"], "who the store holds"),
        (["notes", "list", "--person", who, "--all"], "every note, closed ones too"),
        (["notes", "show", "NOTE", "--person", who], "one note: versions, sources, usage"),
        (["conversations", "list", "--person", who], "the conversations"),
        (["assemble", "--person", who, "--conversation", "C"], "what a turn would get"),
        (["audit", "--person", who], "the journal as a readable log"),
        (["report", who, "--output", "report.pdf"], "the access report, as a PDF"),
        (["verify"], "chains, signatures, replay"),
    ]
    found = xvfb_run if xvfb_run is not None else shutil.which("xvfb-run")
    if found:
        virtual = f"xvfb-run is installed here ({found})."
    else:
        virtual = (
            "xvfb-run is not installed here; on Debian or Ubuntu: sudo apt-get install "
            + " ".join(XVFB_PACKAGES)
            + "."
        )
    lines = [
        *textwrap.wrap(
            "There is no display here (neither DISPLAY nor WAYLAND_DISPLAY is set), so the "
            "inspector cannot open its window.",
            WIDTH,
        ),
        "",
        "On a machine with a desktop (or over ssh -X from one), this opens it:",
        _line(desk),
        "",
        "Here, the command line shows everything the inspector shows; with",
        "  E=" + shlex.quote(shlex.join([*engram, *reach])),
    ]
    width = max(len(shlex.join(words)) for words, _ in offered)
    for words, what in offered:
        lines.append(f"  $E {shlex.join(words).ljust(width)}   {what}")
    lines += [
        "",
        *textwrap.wrap(
            "Automated checks that need the window without anyone looking at it can run it "
            f"on a virtual display, with xvfb-run -a in front of the command; {virtual}",
            WIDTH,
        ),
    ]
    return "\n".join(lines)
