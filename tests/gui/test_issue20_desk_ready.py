"""Issue 20 item 15: `engram desk` says on standard output when it has unlocked a store, so
the bundle's smoke test waits for a positive signal instead of a fixed time (and a wrong
passphrase never says it)."""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import PASSPHRASE

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def desk_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    runtime = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: a socket lives here
    runtime.chmod(0o700)
    yield {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "app"), str(ROOT)]),
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "DESK_PASSPHRASE": PASSPHRASE,
    }
    shutil.rmtree(runtime, ignore_errors=True)


def _desk(store: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "engram", "--store", str(store)]
        + ["--passphrase-env", "DESK_PASSPHRASE", "desk", str(store), "--person", "maya"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def _lines_for(process: subprocess.Popen[str], seconds: float, until: str) -> list[str]:
    """Its output lines, read until one starts with `until`, it exits, or time is up."""
    assert process.stdout is not None
    lines: list[str] = []
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not selector.select(timeout=0.2):
            if process.poll() is not None:
                break
            continue
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith(until):
            break
    return lines


def test_issue20_item15_desk_says_when_it_has_unlocked_the_store(
    demo_path: Path, desk_env: dict[str, str]
) -> None:
    desk = _desk(demo_path, desk_env)
    try:
        lines = _lines_for(desk, 120, "Engram Inspector unlocked")
        assert lines and lines[-1] == f"Engram Inspector unlocked {demo_path}.", lines
        assert desk.poll() is None  # and the window is still up
    finally:
        desk.terminate()
        desk.wait(30)


def test_issue20_item15_a_store_that_does_not_unlock_says_nothing_of_the_kind(
    demo_path: Path, desk_env: dict[str, str]
) -> None:
    desk = _desk(demo_path, {**desk_env, "DESK_PASSPHRASE": "not the passphrase"})
    try:
        lines = _lines_for(desk, 5, "Engram Inspector unlocked")
        assert not any("unlocked" in line for line in lines), lines
    finally:
        desk.terminate()
        desk.wait(30)
