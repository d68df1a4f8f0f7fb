"""Issue 15 item 10: owner-only by default. Under the usual umask 022 the store, its -wal
and -shm, the checkpoint, its lock and the anchors are 0600 and the folders Engram makes
0700; an existing store's files are tightened on open, and nothing is ever loosened."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import start_conversation
from engram.store.store import Store
from tests.conftest import PASSPHRASE


@pytest.fixture(autouse=True)
def _usual_umask() -> Iterator[None]:
    before = os.umask(0o022)
    yield
    os.umask(before)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _files(store: Store, db: Path) -> list[Path]:
    side = ("", "-wal", "-shm", ".checkpoint", ".checkpoint.lock")
    return [*(db.with_name(db.name + s) for s in side), store.anchors.local_path]


def _write(store: Store) -> None:
    start_conversation(store, [PersonId("ana")])
    add_note(PersonSession.open(store, "ana"), "kept", Kind.FACT, Scope.DIRECT)


def test_issue15_item10_a_new_store_is_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "made" / "by" / "engram" / "new.engram"
    store = Store.create(str(db), passphrase=PASSPHRASE)
    try:
        _write(store)
        files = _files(store, db)
        assert all(p.exists() for p in files), [p for p in files if not p.exists()]
        assert {p.name: oct(_mode(p)) for p in files} == {p.name: "0o600" for p in files}
        folders = [db.parent, db.parent.parent, tmp_path / "made", store.anchors.local_path.parent]
        assert {str(f): oct(_mode(f)) for f in folders} == {str(f): "0o700" for f in folders}
    finally:
        store.close()


def test_issue15_item10_an_existing_store_is_tightened_on_open(tmp_path: Path) -> None:
    db = tmp_path / "old.engram"
    store = Store.create(str(db), passphrase=PASSPHRASE)
    _write(store)
    files = _files(store, db)
    for path in files:
        path.chmod(0o644)  # as an older Engram left them
    store.anchors.local_path.parent.chmod(0o755)
    stricter = db.with_name(db.name + ".checkpoint")
    stricter.chmod(0o400)  # someone made this one stricter still: it stays so
    store.close()
    reopened = Store.open(str(db), passphrase=PASSPHRASE)
    try:
        modes = {p.name: oct(_mode(p)) for p in files if p.exists()}
        expected = {p.name: "0o600" for p in files if p.exists()} | {stricter.name: "0o400"}
        assert modes == expected
        assert oct(_mode(store.anchors.local_path.parent)) == "0o700"
    finally:
        reopened.close()
        stricter.chmod(0o600)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_issue15_item10_a_file_someone_else_owns_is_left_as_it_is(tmp_path: Path) -> None:
    db = tmp_path / "shared.engram"
    store = Store.create(str(db), passphrase=PASSPHRASE)
    _write(store)
    store.close()
    lock = db.with_name(db.name + ".checkpoint.lock")
    lock.chmod(0o644)
    os.chown(lock, 12345, 12345)  # not this user's: not Engram's to change
    reopened = Store.open(str(db), passphrase=PASSPHRASE)
    try:
        _write(reopened)  # and the store still opens and writes
    finally:
        reopened.close()
    assert oct(_mode(lock)) == "0o644"
    assert oct(_mode(db)) == "0o600"


def test_issue15_item10_the_release_request_is_owner_only(tmp_path: Path) -> None:
    from engram.store.release import ReleaseRequests

    requests = ReleaseRequests(tmp_path / "s.engram")
    at = requests.post()
    assert requests.path is not None and oct(_mode(requests.path)) == "0o600"
    requests.withdraw(at)
