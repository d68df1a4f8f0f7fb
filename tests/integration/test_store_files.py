"""Issue 9 item 8: files that are not stores are never modified, and each way a path can
fail to be a usable store gets its own true sentence.

The read-only cases run the real CLI in a child process without the power to override
file permissions (as root that power is a capability, dropped with `setpriv`), so the
kernel refuses writes exactly as it does for an ordinary user.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.control.demo import build_demo
from engram.model.errors import NotAStore
from engram.store import crypto
from engram.store.store import Store
from tests.conftest import PASSPHRASE

AUX = ("-wal", "-shm", "-journal", ".checkpoint", ".checkpoint.lock")


def _state(path: Path) -> dict[str, str]:
    """The file's bytes and which companions exist beside it."""
    state = {"bytes": hashlib.sha256(path.read_bytes()).hexdigest()}
    for suffix in AUX:
        state[suffix] = str(path.with_name(path.name + suffix).exists())
    return state


def _foreign(path: Path, journal_mode: str) -> Path:
    with sqlite3.connect(path) as raw:
        raw.execute(f"pragma journal_mode={journal_mode}")
        raw.execute("create table notes (id integer primary key, body text)")
        raw.execute("insert into notes (body) values ('someone else''s data')")
    raw.close()
    return path


@pytest.mark.parametrize(
    ("make", "sentence"),
    [
        (
            lambda p: p.write_bytes(b""),
            "is empty, so it is not an Engram store; it was left unchanged",
        ),
        (
            lambda p: p.write_text("hello\n"),
            "is not an Engram store (not a SQLite database); it was left unchanged",
        ),
        (
            lambda p: _foreign(p, "delete"),
            "is a SQLite database but not an Engram store; it was left unchanged",
        ),
        (
            lambda p: _foreign(p, "wal"),
            "is a SQLite database but not an Engram store; it was left unchanged",
        ),
    ],
    ids=["empty", "text", "foreign-sqlite", "foreign-sqlite-wal"],
)
def test_issue9_item8_a_file_that_is_not_a_store_is_left_exactly_as_it_was(
    tmp_path: Path, cli: Any, make: Any, sentence: str
) -> None:
    path = tmp_path / "other.db"
    make(path)
    before = _state(path)
    for command in (("persons", "--json"), ("verify", "--json"), ("init", "--json")):
        result = cli(*command, store=path)
        assert result.code == 1 and "Traceback" not in result.err
        error = json.loads(result.out)["error"]
        if command[0] == "init":
            assert "is not an Engram store; it was left unchanged" in error
        else:
            assert error == f"The file {path} {sentence}" + (
                " (remove it to create a store there)." if "empty" in sentence else "."
            )
        assert _state(path) == before, command
    with pytest.raises(NotAStore):
        Store.open(str(path), passphrase=PASSPHRASE)
    assert _state(path) == before


def test_issue9_item8_a_foreign_rollback_database_is_not_switched_to_wal(
    tmp_path: Path, cli: Any
) -> None:
    path = _foreign(tmp_path / "other.db", "delete")
    cli("persons", store=path)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as raw:
        assert raw.execute("pragma journal_mode").fetchone()[0] == "delete"
    raw.close()


def test_issue9_item8_a_folder_is_not_a_store(tmp_path: Path, cli: Any) -> None:
    result = cli("persons", "--json", store=tmp_path)
    assert result.code == 1
    assert json.loads(result.out)["error"] == (
        f"{tmp_path} is a folder, not an Engram store; point --store at a store file."
    )


# ---- read-only: a child process that cannot override permissions ----------------------


def _unprivileged(*argv: str) -> list[str]:
    command = [sys.executable, "-m", "engram.cli.main", *argv]
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    assert setpriv, "util-linux's setpriv is needed to run as root without DAC override"
    drop = "--bounding-set=-dac_override,-dac_read_search,-fowner,-linux_immutable"
    return [setpriv, drop, "--inh-caps=-all", *command]


def _run(store: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TEST_PASSPHRASE": PASSPHRASE}
    command = _unprivileged("--store", str(store), "--passphrase-env", "TEST_PASSPHRASE", *argv)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def healthy(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "stores"
    folder.mkdir()
    path = folder / "demo.engram"
    build_demo(str(path), passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    yield path
    folder.chmod(0o755)
    path.chmod(0o644)


READ_ONLY_SENTENCE = (
    "This store is open read-only, because its file or the folder it is in cannot be written "
    "(a copy on read-only media, say), so nothing was changed; to change it, copy it with its "
    ".checkpoint file to a folder you can write to and open that copy."
)


def _reads_and_refuses_writes(store: Path) -> None:
    """Issue 17 item 12: a store that cannot be written opens read-only — reads and verify
    work, a write is refused in one sentence — and nothing is written beside it."""
    before = _state(store)
    people = _run(store, "persons", "--json")
    assert people.returncode == 0, people.stderr
    assert {p["id"] for p in json.loads(people.stdout)} >= {"maya", "sam"}
    checked = _run(store, "verify", "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["ok"]
    words = _run(store, "verify")
    assert "opened read-only" in words.stdout
    refused = _run(
        store,
        "notes",
        "add",
        "--person",
        "maya",
        "--text",
        "x",
        "--kind",
        "fact",
        "--scope",
        "direct",
    )
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.strip() == READ_ONLY_SENTENCE
    exported = _run(store, "export", "--person", "maya")  # every export is in the audit log
    assert exported.returncode == 1 and exported.stdout == ""
    assert "could not be recorded in its audit log and nothing was exported" in exported.stderr
    assert _state(store) == before  # no -wal, no -shm, no checkpoint line written


def test_issue17_item12_a_read_only_store_file_opens_read_only_and_leaves_nothing(
    healthy: Path,
) -> None:
    healthy.chmod(0o444)
    _reads_and_refuses_writes(healthy)
    healthy.chmod(0o644)
    assert _run(healthy, "verify", "--json").returncode == 0  # and it was never damaged


def test_issue17_item12_a_store_in_a_read_only_folder_opens_read_only(healthy: Path) -> None:
    healthy.chmod(0o444)
    healthy.parent.chmod(0o555)
    _reads_and_refuses_writes(healthy)
    healthy.parent.chmod(0o755)
    healthy.chmod(0o644)
    assert _run(healthy, "verify", "--json").returncode == 0


def test_issue9_item8_creating_a_store_in_a_read_only_folder_is_one_sentence(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = _run(folder / "new.engram", "init", "--no-keyring", "--json")
    finally:
        folder.chmod(0o755)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert json.loads(result.stdout)["error"].startswith(
        f"Cannot create the store {folder / 'new.engram'}: its folder {folder} is read-only"
    )
    assert list(folder.iterdir()) == []
