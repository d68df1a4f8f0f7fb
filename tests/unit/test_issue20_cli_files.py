"""Issue 20 item 13: shell completion and the manual page are generated from the argparse
parsers (packaging/cli_files.py) and committed; these fail when one is out of date, as
tests/unit/test_cli_reference.py does for docs/cli.md."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import cli_files  # noqa: E402


def test_issue20_item13_completion_and_man_page_are_current(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Neither a host's variables nor the terminal's width may change what is generated.
    monkeypatch.setenv("ENGRAM_STORE", "/somewhere/else.engram")
    monkeypatch.setenv("ENGRAM_PERSON", "someone")
    monkeypatch.setenv("COLUMNS", "200")
    assert cli_files.stale() == [], (
        "run '.venv/bin/python packaging/cli_files.py' and commit what it writes"
    )


def test_issue20_item13_the_files_cover_every_command() -> None:
    bash = (cli_files.COMPLETIONS / "engram").read_text()
    zsh = (cli_files.COMPLETIONS / "_engram").read_text()
    man = (cli_files.MAN / "engram.1").read_text()
    assert zsh.startswith("#compdef engram\n")
    assert man.startswith('.TH ENGRAM "1" "" "engram ')
    for command in ("persons", "notes", "verify-report", "desk", "serve", "mcp"):
        shown = command.replace("-", "\\-")  # roff's hyphen
        assert command in bash and command in zsh and f"\\fI\\,{shown}\\/\\fR" in man
    for option in ("--passphrase-file", "--install-desktop-entry", "--allow-tools"):
        assert option in bash and option in zsh and option.replace("-", "\\-") in man


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_issue20_item13_bash_completes_commands_and_options() -> None:
    script = cli_files.COMPLETIONS / "engram"
    ran = subprocess.run(
        [
            "bash",
            "-c",
            f"source {script}\n"
            'COMP_WORDS=(engram per); COMP_CWORD=1; _shtab_engram; echo "${COMPREPLY[@]}"\n'
            "COMP_WORDS=(engram notes list --pe); COMP_CWORD=3; _shtab_engram; "
            'echo "${COMPREPLY[@]}"\n',
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert ran.stdout.splitlines() == ["persons person", "--person"]


def test_issue20_item13_the_man_page_is_ascii_with_groff_escapes() -> None:
    # roff is read in one 8-bit encoding; the help's ellipses and arrows arrive as escapes.
    man = (cli_files.MAN / "engram.1").read_bytes()
    assert man.isascii(), "a non-ASCII byte in the man page: add it to cli_files.ROFF_ESCAPES"
    assert cli_files.roff_ascii("audit … → ×é") == "audit \\&.\\|.\\|. \\(-> \\(mu\\[u00E9]"


@pytest.mark.skipif(shutil.which("groff") is None, reason="needs groff")
def test_issue20_item13_groff_reads_the_man_page_without_a_warning() -> None:
    page = cli_files.MAN / "engram.1"
    for device in ([], ["-Tutf8"]):
        ran = subprocess.run(
            ["groff", "-man", "-ww", "-z", *device, str(page)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert ran.returncode == 0 and ran.stderr == "", ran.stderr
