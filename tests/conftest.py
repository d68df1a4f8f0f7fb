"""Shared fixtures: offscreen Qt, a fixed clock, a test keyring, temporary stores.

Argon2id is set to its minimum here so the suite does not spend half a second per store;
the limits a store records are still the ones it was created with (tested in test_keys).
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import keyring
import keyring.backend
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from engram.cli.main import main as cli_main
from engram.model.clock import ManualClock
from engram.store import crypto
from engram.store.store import Store

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
PASSPHRASE = "correct horse battery staple"


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring that lives in this process only."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.items.pop((service, username), None)


class NoKeyring(keyring.backend.KeyringBackend):
    """What a headless machine without Secret Service looks like."""

    priority = 0  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.NoKeyringError("no backend")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.NoKeyringError("no backend")

    def delete_password(self, service: str, username: str) -> None:
        raise keyring.errors.NoKeyringError("no backend")


@pytest.fixture(scope="session", autouse=True)
def _session_data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Session-wide stores (the GUI's demo template) keep their checkpoint anchors in a
    temporary folder too, never in the real user data folder."""
    before = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("session-xdg"))
    yield
    if before is None:
        os.environ.pop("XDG_DATA_HOME", None)
    else:
        os.environ["XDG_DATA_HOME"] = before


@pytest.fixture(autouse=True)
def _isolation(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[MemoryKeyring]:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    monkeypatch.setattr(crypto, "DEFAULT_KDF", crypto.FAST_KDF_FOR_TESTS)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("ENGRAM_STORE", raising=False)
    yield backend


@pytest.fixture
def test_keyring(_isolation: MemoryKeyring) -> MemoryKeyring:
    """The in-memory keyring every test runs with."""
    return _isolation


@pytest.fixture
def clock() -> ManualClock:
    """A clock that moves one second per reading."""
    return ManualClock(START, step=timedelta(seconds=1))


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """Where a test's store lives."""
    return tmp_path / "test.engram"


@pytest.fixture
def store(store_path: Path, clock: ManualClock) -> Iterator[Store]:
    """A new store with both a keyring entry and a passphrase."""
    opened = Store.create(str(store_path), passphrase=PASSPHRASE, clock=clock)
    yield opened
    opened.close()


@dataclass
class CliResult:
    """What one CLI run printed and returned."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        """stdout parsed as JSON."""
        return json.loads(self.out)


@pytest.fixture
def cli(store_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run `engram` in-process against the test store, with the passphrase from the env."""
    monkeypatch.setenv("TEST_PASSPHRASE", PASSPHRASE)
    # As a script runs it, with nobody at a terminal to ask (even under `pytest -s`).
    monkeypatch.setattr(sys, "stdin", io.StringIO())

    def run(*args: str, store: Path | None = None, passphrase: bool = True) -> CliResult:
        argv = ["--store", str(store or store_path)]
        if passphrase:
            argv += ["--passphrase-env", "TEST_PASSPHRASE"]
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = cli_main([*argv, *args])
            except SystemExit as exit_:
                code = int(exit_.code or 0)
        return CliResult(code, out.getvalue(), err.getvalue())

    return run
