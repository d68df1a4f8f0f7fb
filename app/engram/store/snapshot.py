"""Consistent copies of a SQLite store's file, taken while others may be writing to it.

DESIGN (Durability): a live store is never copied as a file — a copy taken while a writer
commits can hold half a transaction, and the -wal beside it holds what the main file does
not yet. `VACUUM INTO` reads one snapshot (a read transaction: WAL lets writers go on) and
writes it as a fresh, compact database: free pages are not carried, so a backup never holds
the zeroed remains of an erased row either. Putting a copy back over a store that exists
goes through SQLite's backup API in one step, which writes the destination as a single
transaction (every reader of it sees the old store or the new one, never a mix), instead of
renaming a file under a -wal that belongs to the old one.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

from engram.store import owner_only
from engram.store.dialect import BUSY_TIMEOUT_MS

__all__ = ["copy_into_store", "integrity_problem", "settle", "snapshot_to", "temporary_beside"]


def _connect(uri: str) -> sqlite3.Connection:
    return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)


def _uri(path: Path, mode: str) -> str:
    return f"file:{urllib.parse.quote(str(path))}?mode={mode}"


def snapshot_to(source: Path, target: Path) -> None:
    """Write one consistent snapshot of the database at `source` to `target`: a new file,
    0600 from its first byte, synced to disk (FileExistsError if `target` exists).

    Read through SQLite's own locking (`mode=ro`, never `immutable`), so a writer committing
    meanwhile is either wholly in the copy or wholly not."""
    owner_only.create_file(target)  # VACUUM INTO accepts an empty file, and keeps its mode
    try:
        source_db = _connect(_uri(source, "ro"))
        try:
            source_db.execute("VACUUM INTO ?", (str(target),))
        finally:
            source_db.close()
        _sync(target)
    except BaseException:
        target.unlink(missing_ok=True)
        raise


def integrity_problem(path: Path) -> str | None:
    """SQLite's own check of a database file: None when sound, else its first finding."""
    db = _connect(_uri(path, "ro"))
    try:
        found = db.execute("PRAGMA quick_check(1)").fetchone()
    finally:
        db.close()
    verdict = str(found[0]) if found else "no answer"
    return None if verdict == "ok" else verdict


def copy_into_store(source: Path, target: Path) -> None:
    """Replace the whole content of the existing database at `target` with `source`'s, in
    one transaction (SQLite's backup API, every page in one step)."""
    source_db = _connect(_uri(source, "ro"))
    try:
        target_db = _connect(_uri(target, "rw"))
        try:
            target_db.execute("PRAGMA synchronous=FULL")
            source_db.backup(target_db, pages=-1)
        finally:
            target_db.close()
    finally:
        source_db.close()


def settle(path: Path) -> None:
    """Move everything in the database's -wal into the file itself, so the file alone is
    the whole database (before it is renamed away from its -wal)."""
    db = _connect(_uri(path, "rw"))
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()


@contextlib.contextmanager
def temporary_beside(target: Path, what: str) -> Iterator[Path]:
    """A name for a temporary file in `target`'s folder (so a rename into place is atomic);
    whatever is left there when the block ends, an error included, is removed."""
    owner_only.remove_stale(target.parent, f".{target.name}.*.{what}")
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".{what}", dir=target.parent)
    os.close(fd)
    temporary = Path(name)
    temporary.unlink()  # the name only: snapshot_to creates the file itself
    try:
        yield temporary
    finally:
        for leftover in (temporary, *_side_files(temporary)):
            leftover.unlink(missing_ok=True)


def _side_files(path: Path) -> tuple[Path, ...]:
    # Opening a copy to check it may leave its SQLite side files and a checkpoint lock.
    ends = ("-wal", "-shm", "-journal", ".checkpoint", ".checkpoint.lock", ".checkpoint.tmp")
    return tuple(path.with_name(path.name + end) for end in ends)


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
