"""Issue 9 item 7: rollback without the checkpoint. A missing checkpoint fails verify; an
older copy put back with its own older checkpoint is caught by the anchors (user data
folder, OS keyring); `engram checkpoint reanchor` vouches for a deliberate move and is
recorded in the store's signed record."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, start_conversation
from engram.store import journal
from engram.store.checkpoint_anchor import Anchor
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE

ANA = PersonId("ana")


def _side(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _snapshot(store_path: Path, target: Path) -> None:
    """A copy of the store with its own checkpoint (a backup taken the right way)."""
    with sqlite3.connect(store_path) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()
    shutil.copy(_side(store_path, ".checkpoint"), _side(target, ".checkpoint"))


def _put_back(copy: Path, store_path: Path) -> None:
    shutil.copy(copy, store_path)
    shutil.copy(_side(copy, ".checkpoint"), _side(store_path, ".checkpoint"))
    for suffix in ("-wal", "-shm"):
        _side(store_path, suffix).unlink(missing_ok=True)


def _grow(store: Store, text: str) -> None:
    with store.read() as conn:
        known = journal.person_exists(conn, ANA)
    if not known:
        start_conversation(store, [ANA])
    add_note(PersonSession.open(store, ANA), text, Kind.FACT, Scope.DIRECT)


def test_issue9_item7_an_older_copy_with_its_own_older_checkpoint_is_caught(
    store: Store, store_path: Path, tmp_path: Path
) -> None:
    _grow(store, "first")
    old = tmp_path / "old.engram"
    _snapshot(store_path, old)
    _grow(store, "second")
    store.close()
    _put_back(old, store_path)  # store and checkpoint agree with each other, both older
    rolled_back = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        report = verify(rolled_back)
    finally:
        rolled_back.close()
    assert not report.ok
    assert any("user data folder last saw" in p for p in report.problems), report.problems


def test_issue9_item7_a_write_never_recreates_a_missing_checkpoint(store: Store) -> None:
    _grow(store, "first")
    store.checkpoint.path.unlink()
    _grow(store, "second")  # a fresh checkpoint here would hide the rollback for good
    assert not store.checkpoint.path.exists()
    assert any("there is none" in p for p in verify(store).problems)


def test_issue17_item12_a_copy_without_its_checkpoint_is_a_warning_not_a_problem(
    store: Store, store_path: Path, tmp_path: Path, cli: Any
) -> None:
    _grow(store, "first")
    store.close()
    copy = tmp_path / "review" / "copy.engram"
    copy.parent.mkdir()
    shutil.copy(store_path, copy)  # nothing on this computer ever saw a checkpoint there
    checked = cli("verify", "--json", store=copy)
    assert checked.code == 0, checked.out
    report = checked.json()
    assert report["ok"] and report["problems"] == [] and report["no_checkpoint_here"]
    [warning] = report["warnings"]
    assert warning.startswith("chains intact; this copy has no checkpoint here")
    words = cli("verify", store=copy)
    assert words.code == 0 and "NOT intact" not in words.out and "problem" not in words.out
    assert not _side(copy, ".checkpoint").exists()  # verify vouches for nothing by itself


def test_issue17_item12_a_checkpoint_deleted_where_one_was_seen_is_still_a_problem(
    store: Store,
) -> None:
    _grow(store, "first")
    store.checkpoint.path.unlink()  # the anchor in the user data folder saw it here
    report = verify(store)
    assert not report.ok and not report.no_checkpoint_here
    assert any("this computer saw one there" in p for p in report.problems), report.problems


def test_issue17_item12_a_real_rollback_is_still_a_problem(
    store: Store, store_path: Path, tmp_path: Path
) -> None:
    """A checkpoint ahead of the store (an older database put back under its checkpoint)."""
    _grow(store, "first")
    old = tmp_path / "old.engram"
    with sqlite3.connect(store_path) as src, sqlite3.connect(old) as dst:
        src.backup(dst)
    src.close()
    dst.close()
    _grow(store, "second")
    store.close()
    shutil.copy(old, store_path)
    for suffix in ("-wal", "-shm"):
        _side(store_path, suffix).unlink(missing_ok=True)
    rolled_back = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        report = verify(rolled_back)
    finally:
        rolled_back.close()
    assert not report.ok and not report.no_checkpoint_here
    assert any("older copy of the store may have been put back" in p for p in report.problems)
    assert not any("no checkpoint here" in w for w in report.warnings)


def test_issue9_item7_a_lagging_anchor_is_not_a_rollback(store: Store) -> None:
    """A crash between the checkpoint's rewrite and its anchor's: the anchor is behind."""
    _grow(store, "first")
    behind = store.checkpoint.read()
    _grow(store, "second")
    assert behind is not None
    store.anchors.local_path.write_text(f'{{"anchor": "{Anchor.of(behind).to_text()}"}}')
    report = verify(store)
    assert report.ok, report.problems


def test_issue9_item7_reanchor_after_a_deliberate_move_is_recorded(
    store: Store, store_path: Path, tmp_path: Path, cli: Any
) -> None:
    _grow(store, "first")
    store.close()
    moved = tmp_path / "moved" / "review.engram"
    moved.parent.mkdir()
    shutil.copy(store_path, moved)  # copied for offline review, without its checkpoint
    copied = cli("verify", "--json", store=moved)
    assert copied.code == 0 and copied.json()["no_checkpoint_here"], copied.out  # issue 17 #12
    done = cli("checkpoint", "reanchor", "--json", store=moved)
    assert done.code == 0, done.err
    assert done.json()["previous"] == "missing"
    check = cli("verify", "--json", store=moved)
    assert check.code == 0 and check.json()["ok"], check.out
    status = cli("checkpoint", "status", "--json", store=moved).json()
    assert status["state"] == "present" and status["anchors"]["user_data_folder"]
    [entry] = status["reanchored"]
    assert entry["previous"] == "missing" and entry["actor"] == "operator"
    _grow_at(moved, "written after the move")
    assert cli("verify", store=moved).code == 0


def _grow_at(path: Path, text: str) -> None:
    store = Store.open(str(path), passphrase=PASSPHRASE)
    try:
        add_note(PersonSession.open(store, ANA), text, Kind.FACT, Scope.DIRECT)
    finally:
        store.close()


def test_issue9_item7_reanchor_refuses_a_store_whose_chains_do_not_verify(
    store: Store, store_path: Path, cli: Any
) -> None:
    conversation = start_conversation(store, [ANA])
    append_turn(store, conversation.id, role="user", author=ANA, text="hello")
    store.close()
    with sqlite3.connect(store_path) as raw:
        raw.execute("update conversation_log set at = at + 1 where seq = 2")
    raw.close()
    store.checkpoint.path.unlink()
    refused = cli("checkpoint", "reanchor")
    assert refused.code != 0 and "do not verify" in refused.err
    assert len(refused.err.strip().splitlines()) == 1
    assert refused.err.strip().endswith("instead.") and ". N" not in refused.err  # one sentence
    assert not store.checkpoint.path.exists()  # nothing was changed


def test_issue9_item7_the_keyring_anchor_catches_rolling_back_everything_on_disk(
    store_path: Path, tmp_path: Path
) -> None:
    """Store, checkpoint and the user data folder all rolled back: the keyring still knows."""
    keyed = Store.create(str(store_path))  # its key lives in the keyring
    _grow(keyed, "first")
    old = tmp_path / "old.engram"
    _snapshot(store_path, old)
    old_anchor = keyed.anchors.local_path.read_text()
    _grow(keyed, "second")
    keyed.close()
    _put_back(old, store_path)
    keyed.anchors.local_path.write_text(old_anchor)  # the folder went back in time too
    rolled_back = Store.open(str(store_path))  # unlocked from the keyring
    try:
        report = verify(rolled_back)
    finally:
        rolled_back.close()
    assert not report.ok
    assert any("the OS keyring last saw" in p for p in report.problems), report.problems
    assert not any("user data folder" in p for p in report.problems)


def _open_with_passphrase(store_path: Path) -> Store:
    return Store.open(str(store_path), passphrase=PASSPHRASE)


def test_issue15_item9_the_keyring_anchor_counts_when_opened_with_the_passphrase(
    store: Store, store_path: Path, tmp_path: Path, test_keyring: Any
) -> None:
    """Store, checkpoint and the whole anchors folder put back, opened with --passphrase-env
    (the key is in the keyring too): the keyring's anchor still catches it, because writes
    made with the passphrase advanced it."""
    store.close()
    first = _open_with_passphrase(store_path)
    _grow(first, "first")
    written = first.checkpoint.read()
    assert written is not None
    anchored = test_keyring.items[("engram", first.anchors.keyring_user)]
    assert anchored == Anchor.of(written).to_text()  # a passphrase write advanced it
    first.close()
    old = tmp_path / "old.engram"
    _snapshot(store_path, old)
    anchors = first.anchors.local_path.parent
    shutil.copytree(anchors, tmp_path / "old-anchors")
    second = _open_with_passphrase(store_path)
    _grow(second, "second")
    second.close()
    _put_back(old, store_path)
    shutil.rmtree(anchors)
    shutil.copytree(tmp_path / "old-anchors", anchors)
    rolled_back = _open_with_passphrase(store_path)
    try:
        report = verify(rolled_back)
    finally:
        rolled_back.close()
    assert not report.ok
    assert any("the OS keyring last saw" in p for p in report.problems), report.problems


def test_issue15_item9_a_keyring_without_this_store_is_not_asked_to_keep_one(
    store_path: Path, test_keyring: Any
) -> None:
    """A passphrase-only store (--no-keyring) on a computer with a keyring: nothing of it
    goes to the keyring, and verify does not miss an anchor that was never there."""
    created = Store.create(str(store_path), passphrase=PASSPHRASE, use_keyring=False)
    created.close()
    opened = _open_with_passphrase(store_path)
    try:
        _grow(opened, "first")
        assert verify(opened).ok
    finally:
        opened.close()
    assert test_keyring.items == {}
