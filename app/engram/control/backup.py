"""Backing a store up and putting a backup back (issue 21 item 1), for the CLI and the window.

A backup is a consistent snapshot of the database (store/snapshot.py) and, beside it, the
store's signed checkpoint as it stood just before the snapshot, so `engram verify` on the
backup finds it whole (a checkpoint that lags its database is advanced, never a rollback).
Both are owner-only and appear only when complete: each is written to a temporary file in
the destination's folder and renamed into place, the checkpoint first, so no backup file
is ever seen without its checkpoint.

Restoring checks the backup's chains and signatures on a copy in the destination's folder
before anything there changes, puts it in place (a rename where no store is; SQLite's
backup API, one transaction, over a store that exists: see snapshot.py), and re-anchors
it (control/reanchor.py): a restored store is by design older than its checkpoint and its
anchors, and the re-anchor, recorded in the store's signed record with who did it, is the
deliberate vouching that tells a restore from a rollback.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.control.reanchor import reanchor
from engram.model.errors import InvalidInput, NotAllowed, NotAStore, StoreExists
from engram.store import file_check, owner_only, snapshot
from engram.store.dialect import sqlite_path
from engram.store.keyring_access import KeyringAccess
from engram.store.location import store_url
from engram.store.store import Store
from engram.store.verify import verify

# The one sentence for a server store: its database is backed up by the server's own tool.
SERVER_BACKUP = (
    "This store is kept in a database server, which Engram cannot copy consistently from "
    "outside; back it up with the server's own tool (for PostgreSQL, pg_dump -Fc, and keep "
    "the store's .checkpoint file from Engram's user data folder beside the dump) — nothing "
    "was written."
)
RESTORED = "restored from a backup"


@dataclass(frozen=True)
class BackupWritten:
    """Where a backup went."""

    path: Path
    checkpoint: Path | None  # None when the store had no checkpoint to carry
    size: int

    def to_json(self) -> dict[str, Any]:
        """The JSON shape the CLI prints."""
        return {
            "backup": str(self.path),
            "checkpoint": str(self.checkpoint) if self.checkpoint else None,
            "bytes": self.size,
        }


def backup_store(
    store: Store, destination: str | os.PathLike[str], *, replace: bool = False
) -> BackupWritten:
    """Write a consistent, owner-only snapshot of the open store, with its checkpoint, to
    `destination`; an existing file there is replaced only when asked."""
    source = sqlite_path(store.url)
    if source is None:
        raise NotAllowed(SERVER_BACKUP)
    target = _file_target(destination, "backup")
    if target.resolve() == source.resolve():
        raise InvalidInput(
            f"{target} is the store itself; choose another file for the backup. Nothing was "
            "written."
        )
    if target.exists() and not replace:
        raise StoreExists(
            f"There is already a file at {target}; it was left unchanged — choose another "
            "name, or ask to replace it."
        )
    carried = target.with_name(target.name + ".checkpoint")
    with (
        snapshot.temporary_beside(target, "backup") as database,
        snapshot.temporary_beside(carried, "backup") as side,
    ):
        # The checkpoint first, under its lock (no write commits while it is held), then the
        # database: the snapshot can only be at or after the checkpoint, which verify
        # advances, never before it, which would read as a rollback.
        with store.checkpoint.locked():
            try:
                checkpoint_bytes: bytes | None = store.checkpoint.path.read_bytes()
            except FileNotFoundError:
                checkpoint_bytes = None
        if checkpoint_bytes is not None:
            fd = owner_only.open_private(side, os.O_WRONLY | os.O_EXCL)
            try:
                _write_all(fd, checkpoint_bytes)
                os.fsync(fd)
            finally:
                os.close(fd)
        try:
            snapshot.snapshot_to(source, database)
        except OSError as error:
            raise _unwritten(target, "backup", error) from None
        problem = snapshot.integrity_problem(database)
        if problem is not None:
            raise NotAllowed(
                f"The snapshot of the store did not pass SQLite's own check ({problem}), so "
                "no backup was written; verify the store."
            )
        if replace:
            _drop_side_files(target)  # a -wal of the file replaced must not meet the new one
        if checkpoint_bytes is not None:
            os.replace(side, carried)
        else:
            carried.unlink(missing_ok=True)  # an older backup's checkpoint is not this one's
        os.replace(database, target)
    return BackupWritten(
        target, carried if checkpoint_bytes is not None else None, target.stat().st_size
    )


@dataclass(frozen=True)
class Restored:
    """What a restore put where, and its re-anchoring."""

    path: Path
    replaced: bool  # a store was there, and now holds the backup's content
    store_id: str
    reanchored: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The JSON shape the CLI prints."""
        return {
            "store": str(self.path),
            "replaced": self.replaced,
            "id": self.store_id,
            "checkpoint": self.reanchored["checkpoint"],
            "serial": self.reanchored["serial"],
            "record": self.reanchored["record"],
        }


def restore_backup(
    backup: str | os.PathLike[str],
    to: str | os.PathLike[str],
    *,
    actor: str,
    replace: bool = False,
    passphrase: str | None = None,
    keyring: KeyringAccess | None = None,
) -> Restored:
    """Put the backup at `to` (over a store there only with `replace`), checked first, then
    re-anchored there in the store's signed record under `actor`."""
    source = Path(backup).expanduser()
    if not file_check.holds_store(source):
        raise NotAStore(f"{source} is not an Engram store or backup; nothing was restored.")
    target_url = store_url(to)
    target = sqlite_path(target_url)
    if target is None:
        raise NotAllowed(
            "A backup is restored to a store file; a server's database is restored with its "
            "own tool (for PostgreSQL, pg_restore). Nothing was restored."
        )
    target = _file_target(target, "restored store")
    if target.resolve() == source.resolve():
        raise InvalidInput(f"{source} is the backup itself; restore it to another file.")
    there = file_check.holds_store(target)
    if target.exists() and not there:
        raise NotAStore(
            f"There is a file at {target} that is not an Engram store; it was left unchanged "
            "— choose another place, or remove it first."
        )
    if there and not replace:
        raise StoreExists(
            f"A store already exists at {target}; nothing was restored — restore to another "
            "place, or ask to replace it."
        )
    with snapshot.temporary_beside(target, "restoring") as copy:
        try:
            snapshot.snapshot_to(source, copy)
        except OSError as error:
            raise _unwritten(target, "restored store", error) from None
        _check_chains(copy, source, passphrase, keyring)
        snapshot.settle(copy)  # opening it may have upgraded it: nothing stays in its -wal
        if there:
            snapshot.copy_into_store(copy, target)
        else:
            _drop_side_files(target)  # leftovers of a store once here would corrupt this one
            os.replace(copy, target)
    store = Store.open(str(target), passphrase=passphrase, keyring=keyring)
    try:
        done = reanchor(store, actor, {"reason": RESTORED})
        return Restored(target, there, store.info.id, done)
    finally:
        store.close()


def _check_chains(
    copy: Path, source: Path, passphrase: str | None, keyring: KeyringAccess | None
) -> None:
    """Refuse a backup whose chains or signatures do not verify, before anything is placed."""
    store = Store.open(str(copy), passphrase=passphrase, keyring=keyring)
    try:
        checked = verify(store, against_checkpoint=False)
    finally:
        store.close()
    if not checked.ok:
        raise NotAllowed(
            f"The backup {source} does not verify ({checked.problems[0]}), so nothing was "
            "restored; choose another backup."
        )


def _file_target(destination: str | os.PathLike[str] | Path, what: str) -> Path:
    target = Path(destination).expanduser()
    if target.is_dir():
        raise InvalidInput(
            f"{target} is a folder; give a file name for the {what}. Nothing was written."
        )
    if not target.parent.is_dir():
        raise InvalidInput(
            f"The folder {target.parent} does not exist; choose another place for the {what}. "
            "Nothing was written."
        )
    return target


def _drop_side_files(path: Path) -> None:
    for end in ("-wal", "-shm", "-journal"):
        path.with_name(path.name + end).unlink(missing_ok=True)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _unwritten(target: Path, what: str, error: OSError) -> InvalidInput:
    return InvalidInput(
        f"The {what} could not be written to {target} ({error.strerror or error}); choose "
        "another folder. Nothing was written."
    )
