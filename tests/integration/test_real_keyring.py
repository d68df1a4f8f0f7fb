"""Issue 9 item 11: the real keyring. A Secret Service from gnome-keyring-daemon on a
private D-Bus session, unlocked with a test password (tests/secret_service.py): remember
and open without a passphrase; refusal when the backend changed; a locked keyring and a
missing one, each with its own sentence; and the checkpoint anchor of item 7 kept beside
the store key."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import keyring
import pytest

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.errors import KeyUnavailable
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import start_conversation
from engram.store.checkpoint_anchor import Anchor
from engram.store.keyring_access import SERVICE
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE, MemoryKeyring
from tests.secret_service import SecretService, secret_service

__all__ = ["secret_service"]  # the fixture, used by name below
ANA = PersonId("ana")
SECRET_SERVICE = "keyring.backends.SecretService.Keyring"


def _files(path: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.parent.iterdir())
        if p.name.startswith(path.name) and p.is_file()
    }


def _sentence(error: pytest.ExceptionInfo[KeyUnavailable]) -> str:
    message = str(error.value)
    assert message.endswith(".") and ". " not in message and "\n" not in message
    return message


def test_issue9_item11_remember_then_open_without_a_passphrase(
    secret_service: SecretService, store_path: Path, cli: Any
) -> None:
    created = cli("init", "--json")  # with a passphrase, and remembered in the keyring
    assert created.code == 0, created.err
    assert created.json()["keyring"] is True
    store_id = created.json()["id"]
    assert keyring.get_password(SERVICE, store_id)  # really in gnome-keyring
    opened = cli("persons", "--json", passphrase=False)
    assert opened.code == 0, opened.err
    store = Store.open(str(store_path))
    try:
        assert store.info.keyring_backend == SECRET_SERVICE
    finally:
        store.close()


def test_issue9_item11_a_changed_backend_is_refused_and_nothing_is_written(
    secret_service: SecretService, store_path: Path
) -> None:
    Store.create(str(store_path)).close()
    before = _files(store_path)
    keyring.set_keyring(MemoryKeyring())  # the same store, now on a computer without it
    with pytest.raises(KeyUnavailable) as refused:
        Store.open(str(store_path))
    message = _sentence(refused)
    assert "keyring changed" in message and SECRET_SERVICE in message
    assert "no new store was created" in message
    assert _files(store_path) == before


def test_issue9_item11_a_store_made_elsewhere_is_refused_by_the_secret_service(
    secret_service: SecretService, store_path: Path
) -> None:
    keyring.set_keyring(MemoryKeyring())
    Store.create(str(store_path)).close()
    from keyring.backends import SecretService as backend

    keyring.set_keyring(backend.Keyring())
    with pytest.raises(KeyUnavailable) as refused:
        Store.open(str(store_path))
    assert "keyring changed" in _sentence(refused)


def test_issue9_item11_a_locked_keyring_has_its_own_sentence(
    secret_service: SecretService, store_path: Path
) -> None:
    Store.create(str(store_path), passphrase=PASSPHRASE).close()
    secret_service.lock()
    with pytest.raises(KeyUnavailable) as refused:
        Store.open(str(store_path))
    message = _sentence(refused)
    assert "keyring is locked" in message and "unlock it" in message
    Store.open(str(store_path), passphrase=PASSPHRASE).close()  # the passphrase still works


def test_issue9_item11_a_missing_keyring_has_its_own_sentence(
    secret_service: SecretService, store_path: Path
) -> None:
    Store.create(str(store_path), passphrase=PASSPHRASE).close()
    secret_service.keyring_daemon.terminate()  # no Secret Service any more
    secret_service.keyring_daemon.wait(timeout=10)
    with pytest.raises(KeyUnavailable) as refused:
        Store.open(str(store_path))
    missing = _sentence(refused)
    assert "no usable OS keyring" in missing and "with its passphrase" in missing
    assert "--passphrase-env" in refused.value.for_command_line()  # the CLI says how
    assert "locked" not in missing


def test_issue9_item11_a_keyring_without_this_stores_key_has_its_own_sentence(
    secret_service: SecretService, store_path: Path
) -> None:
    created = Store.create(str(store_path), passphrase=PASSPHRASE)
    created.close()
    keyring.delete_password(SERVICE, created.info.id)
    with pytest.raises(KeyUnavailable) as refused:
        Store.open(str(store_path))
    message = _sentence(refused)
    assert "holds no key for this store" in message and "locked" not in message


def test_issue9_item11_the_checkpoint_anchor_lives_beside_the_key(
    secret_service: SecretService, store_path: Path, tmp_path: Path
) -> None:
    """Item 7 on the real keyring: rolling back the store, its checkpoint and the user data
    folder together is still caught, because the keyring saw the later checkpoint."""
    store = Store.create(str(store_path))
    start_conversation(store, [ANA])
    add_note(PersonSession.open(store, ANA), "first", Kind.FACT, Scope.DIRECT)
    old = tmp_path / "old.engram"
    with sqlite3.connect(store_path) as src, sqlite3.connect(old) as dst:
        src.backup(dst)
    src.close()
    dst.close()
    checkpoint = store_path.with_name(store_path.name + ".checkpoint")
    old_checkpoint = checkpoint.read_bytes()
    old_anchor = store.anchors.local_path.read_bytes()
    add_note(PersonSession.open(store, ANA), "second", Kind.FACT, Scope.DIRECT)
    current = store.checkpoint.read()
    assert current is not None
    anchored = keyring.get_password(SERVICE, store.anchors.keyring_user)
    assert anchored == Anchor.of(current).to_text()  # kept in gnome-keyring on each write
    store.close()
    shutil.copy(old, store_path)
    for suffix in ("-wal", "-shm"):
        store_path.with_name(store_path.name + suffix).unlink(missing_ok=True)
    checkpoint.write_bytes(old_checkpoint)
    store.anchors.local_path.write_bytes(old_anchor)
    rolled_back = Store.open(str(store_path))
    try:
        report = verify(rolled_back)
    finally:
        rolled_back.close()
    assert not report.ok
    assert any("the OS keyring last saw" in p for p in report.problems), report.problems


def _engram(
    secret_service: SecretService, store_path: Path, *args: str, timeout: float = 30
) -> tuple[subprocess.CompletedProcess[str], float]:
    """`engram` in a child process using the real Secret Service backend by name, as a
    person sets PYTHON_KEYRING_BACKEND; how long it took, exit included."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "engram", "--store", str(store_path), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={
            **os.environ,
            "PYTHON_KEYRING_BACKEND": SECRET_SERVICE,
            "DBUS_SESSION_BUS_ADDRESS": secret_service.address,
        },
    )
    return done, time.monotonic() - started


def _one_sentence(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1 and done.stdout == "", done.stdout
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


def test_issue15_item11_the_secret_service_named_but_gone_is_one_sentence_at_once(
    secret_service: SecretService, store_path: Path
) -> None:
    Store.create(str(store_path), passphrase=PASSPHRASE).close()
    secret_service.keyring_daemon.terminate()  # the daemon is gone; the bus is still there
    secret_service.keyring_daemon.wait(timeout=10)
    done, took = _engram(secret_service, store_path, "persons")
    said = _one_sentence(done)
    assert "no usable OS keyring" in said and "Secret Service" in said, said
    assert "--passphrase-env" in said  # this store has one
    assert took < 15  # Python's start-up included; the keyring itself answers at once


def test_issue15_item11_a_locked_keyring_never_advises_a_passphrase_the_store_lacks(
    secret_service: SecretService, store_path: Path
) -> None:
    Store.create(str(store_path)).close()  # keyring only: no passphrase
    secret_service.lock()
    with pytest.raises(KeyUnavailable) as refused:
        Store.open(str(store_path))
    message = _sentence(refused)
    assert "keyring is locked" in message and "unlock it" in message
    assert "has no passphrase" in message
    assert "with its passphrase" not in message
    assert "--passphrase-env" not in refused.value.for_command_line()


@pytest.mark.slow
def test_issue15_item11_a_keyring_that_never_answers_times_out_and_the_process_exits(
    secret_service: SecretService, store_path: Path
) -> None:
    Store.create(str(store_path)).close()  # keyring only: no passphrase
    secret_service.keyring_daemon.send_signal(signal.SIGSTOP)  # on the bus, never answering
    try:
        done, took = _engram(secret_service, store_path, "persons")
    finally:
        secret_service.keyring_daemon.send_signal(signal.SIGCONT)
    said = _one_sentence(done)
    assert "did not answer within 5 seconds" in said and "has no passphrase" in said, said
    assert took < 20  # the hung call does not hold the process at exit
