"""Issue 12 item 5: long commands draw a progress bar on a terminal, and only there."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from engram.model.ids import PersonId
from engram.runtime.conversations import append_turn, start_conversation
from engram.store.store import Store
from tests.conftest import PASSPHRASE


@pytest.fixture
def env(store: Store, store_path: Path) -> dict[str, str]:
    for name in ("ana", "bo"):
        conversation = start_conversation(store, [PersonId(name)])
        append_turn(store, conversation.id, role="user", author=PersonId(name), text="Hi there")
    return {
        **os.environ,
        "ENGRAM_STORE": str(store_path),
        "TEST_PASSPHRASE": PASSPHRASE,
        "TERM": "xterm-256color",
        "COLUMNS": "100",
    }


def _engram(*args: str) -> list[str]:
    return [sys.executable, "-m", "engram", "--passphrase-env", "TEST_PASSPHRASE", *args]


def _on_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run with stdout and stderr on a pseudo-terminal; what the terminal received."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env
    )
    os.close(follower)
    received = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closes when the process exits
            break
        if not chunk:
            break
        received += chunk
    os.close(leader)
    return process.wait(timeout=60), received.decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("command", "label"),
    [(["verify"], "Verifying chains"), (["maintain"], "Maintaining"), (["learn"], "Learning")],
)
def test_issue12_item5_a_terminal_sees_a_progress_bar(
    env: dict[str, str], command: list[str], label: str
) -> None:
    code, screen = _on_terminal(_engram(*command), env)
    assert code == 0, screen
    assert label in screen


def test_issue12_item5_no_bar_when_output_is_not_a_terminal(env: dict[str, str]) -> None:
    done = subprocess.run(_engram("verify"), capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith("Store intact")


def test_issue12_item5_no_bar_with_json_even_on_a_terminal(env: dict[str, str]) -> None:
    code, screen = _on_terminal(_engram("verify", "--json"), env)
    assert code == 0, screen
    assert "Verifying" not in screen
    assert '"ok": true' in screen
