"""Issue 20 item 8: every command the user guide prints runs as printed after the run
command, on a terminal, against the demo in a fresh home.

The guide's ```sh blocks and its inline `engram …` spans are read from the guide itself;
the block of `export` lines is what the guide says to type first. The run command itself
(`bash packaging/run.sh`) bootstraps a virtual environment, so it is stood in for by what
it leaves behind: `engram` in the checkout's `.venv/bin` (here a shim that runs this
tree's `engram` with the tests' fast key derivation) and the demo built by `engram demo`,
whose default is the run command's `~/.local/share/engram/demo.engram`. Commands run in
bash on a pseudo-terminal (pexpect); the passphrase prompts are answered as a person
following the guide would. `engram desk` is proven open by the guide's own second
`engram desk`, which the first window answers.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "user-guide.md"
DEMO_PASSPHRASE = "demo"
NEW_PASSPHRASE = "quiet lantern orbit mosaic"
TIMEOUT = 90
SHIM = """#!/bin/sh
exec {python} -c 'import sys
from engram.store import crypto
crypto.DEFAULT_KDF = crypto.FAST_KDF_FOR_TESTS
from engram.cli.main import run
sys.argv[0] = "engram"
run()' "$@"
"""


def guide_commands() -> tuple[list[str], list[str]]:
    """(the setup lines the guide says to type first, every other command in order)."""
    text = GUIDE.read_text("utf-8")
    setup: list[str] = []
    found: list[tuple[int, str]] = []
    for block in re.finditer(r"```sh\n(.*?)```", text, flags=re.S):
        lines = [line for line in block.group(1).splitlines() if line.strip()]
        if all(line.startswith("export ") for line in lines):
            setup += lines
        else:
            found += [(block.start(), line) for line in lines]
    prose = re.sub(r"```.*?```", lambda m: " " * len(m.group(0)), text, flags=re.S)
    for span in re.finditer(r"`((?:engram|bash) [^`]+)`", prose):
        found.append((span.start(), span.group(1)))
    return setup, [command for _, command in sorted(found)]


@pytest.fixture
def runtime_dir() -> Iterator[Path]:
    """The windows' runtime folder. A socket's path has room for about 100 bytes, and
    pytest's folders are too deep for it."""
    folder = Path(tempfile.mkdtemp(prefix="engram-guide-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _checkout(tmp_path: Path, runtime: Path) -> tuple[Path, dict[str, str]]:
    checkout = tmp_path / "checkout"
    bin_dir = checkout / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    shim = bin_dir / "engram"
    shim.write_text(SHIM.format(python=shlex.quote(sys.executable)))
    shim.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        HOME=str(home),
        PYTHONPATH=f"{REPO / 'app'}{os.pathsep}{REPO}",
        XDG_RUNTIME_DIR=str(runtime),
        QT_QPA_PLATFORM="offscreen",
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",  # a headless computer
        TERM="dumb",
    )
    return checkout, env


class Person:
    """Answers the prompts as someone following the guide: the demo's passphrase, until
    the guide has them change it."""

    def __init__(self) -> None:
        self.passphrase = DEMO_PASSPHRASE

    def run(self, line: str, checkout: Path, env: dict[str, str]) -> tuple[int, str]:
        child = pexpect.spawn(
            "bash", ["-c", line], cwd=str(checkout), env=env, encoding="utf-8", timeout=TIMEOUT
        )
        said = []
        while True:
            which = child.expect(
                [
                    r"Passphrase for [^\r\n]*: ",
                    "New passphrase: ",
                    "passphrase again: ",
                    pexpect.EOF,
                ]
            )
            said.append(child.before or "")
            if which == 0:
                child.sendline(self.passphrase)
            elif which in (1, 2):
                child.sendline(NEW_PASSPHRASE)
                if which == 2:
                    self.passphrase = NEW_PASSPHRASE
            else:
                break
        child.close()
        return int(child.exitstatus if child.exitstatus is not None else -1), "".join(said)


def _desk_opens(prefix: str, line: str, checkout: Path, env: dict[str, str]) -> str:
    first = subprocess.Popen(
        ["bash", "-c", f"{prefix}exec {line}"],
        cwd=checkout,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    runtime = Path(env["XDG_RUNTIME_DIR"])
    try:
        deadline = time.monotonic() + TIMEOUT
        # The window listens for a second `engram desk` of its store once it is up.
        while not list(runtime.glob("engram-desk-*")):
            assert first.poll() is None, f"{line!r} exited {first.returncode}"
            assert time.monotonic() < deadline, f"{line!r} never opened a window"
            time.sleep(0.2)
        second = subprocess.run(
            ["bash", "-c", prefix + line],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert second.returncode == 0 and "already has" in second.stdout, second
        return second.stdout
    finally:
        first.terminate()
        first.wait(TIMEOUT)
        for left in runtime.glob("engram-desk-*"):
            left.unlink()  # a window killed leaves its socket; the next one takes it over


def test_issue20_item8_the_guide_names_its_commands() -> None:
    setup, commands = guide_commands()
    assert setup == [
        'export PATH="$PWD/.venv/bin:$PATH"',
        "export ENGRAM_STORE=~/.local/share/engram/demo.engram",
    ]
    assert "bash packaging/run.sh" in commands
    assert any(c.startswith("engram desk") for c in commands)
    assert "engram passphrase change" in commands and "engram verify" in commands


def test_issue20_item8_every_user_guide_command_runs_as_printed(
    tmp_path: Path, runtime_dir: Path
) -> None:
    setup, commands = guide_commands()
    checkout, env = _checkout(tmp_path, runtime_dir)
    person = Person()
    prefix = "; ".join(setup) + "; "
    # What the run command leaves: the demo where the guide says it is.
    code, said = person.run(prefix + "engram demo", checkout, env)
    demo = Path(env["HOME"]) / ".local" / "share" / "engram" / "demo.engram"
    assert code == 0 and demo.is_file(), said
    ran = []
    for command in commands:
        if command == "bash packaging/run.sh":
            continue
        if command.startswith("engram desk"):
            assert str(demo) in _desk_opens(prefix, command, checkout, env)
        else:
            code, said = person.run(prefix + command, checkout, env)
            assert code == 0, f"{command!r} exited {code}: {said}"
        ran.append(command)
    assert len(ran) == len(commands) - 1
    assert (checkout / "maya-export.json").is_file()  # the export the guide shows
    assert person.passphrase == NEW_PASSPHRASE  # the guide changed it, and it opened after
