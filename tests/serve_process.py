"""A real `engram serve` process over a fresh store, for tests that need one server for a
whole module (the client's tests): the store is made in-process with the fast test KDF and
an in-memory keyring, then served from its own process, unlocked by the passphrase."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import keyring
import pytest

from engram.cli.main import main as cli_main
from engram.store import crypto
from tests.conftest import PASSPHRASE, MemoryKeyring


@dataclass(frozen=True)
class Served:
    """A running server: its base URL and a project API key for it."""

    url: str
    key: str


def _cli(store: Path, *args: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli_main(["--store", str(store), "--passphrase-env", "TEST_PASSPHRASE", *args])
    assert code == 0, (args, out.getvalue())
    return out.getvalue()


@contextmanager
def cli_environment(folder: Path) -> Iterator[None]:
    """What the CLI needs here to work on a served store, as another process would: the
    test KDF, the passphrase in the environment, the data folder, an in-memory keyring."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(crypto, "DEFAULT_KDF", crypto.FAST_KDF_FOR_TESTS)
        patch.setenv("TEST_PASSPHRASE", PASSPHRASE)
        patch.setenv("XDG_DATA_HOME", str(folder / "xdg"))
        before = keyring.get_keyring()
        keyring.set_keyring(MemoryKeyring())
        try:
            yield
        finally:
            keyring.set_keyring(before)


def cli_json(store: Path, folder: Path, *args: str) -> Any:
    """The CLI's JSON answer to `args` on a served store (in `cli_environment`)."""
    with cli_environment(folder):
        return json.loads(_cli(store, *args, "--json"))


@contextmanager
def served_store(folder: Path, agents: dict[str, dict[str, Any]]) -> Iterator[Served]:
    """A new store with these agents configured and one API key, served on a free port;
    the server is stopped with SIGTERM and must exit cleanly."""
    store = folder / "served.engram"
    with cli_environment(folder):
        _cli(store, "init")
        for name, config in agents.items():
            path = folder / f"{name}.json"
            path.write_text(json.dumps(config))
            _cli(store, "agents", "set", name, "--config", str(path))
        key = str(json.loads(_cli(store, "keys", "create", "--label", "t", "--json"))["key"])
    env = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE, "XDG_DATA_HOME": str(folder / "xdg")}
    env.pop("PYTHONUNBUFFERED", None)  # the port line must arrive without it
    command = [sys.executable, "-m", "engram", "--store", str(store)]
    command += ["--passphrase-env", "TEST_PASSPHRASE", "serve", "--port", "0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = re.search(r"(http://[^ ]+)/v1", line)
        assert url, line
        yield Served(url.group(1), key)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=20) == 0
