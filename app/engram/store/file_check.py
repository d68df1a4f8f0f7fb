"""What a store file is, found before anything writes to it.

Opening a file through SQLAlchemy switches it to WAL mode and, for an empty file, writes a
database header; so a path is first looked at with plain reads and a read-only SQLite
connection that creates nothing beside it. Each way a file can fail to be a usable store
gets its own true sentence, and none of them changes the file.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import urllib.parse
from pathlib import Path

from engram.model.errors import CorruptStore, NotAStore, ReadOnlyStore, StoreMissing
from engram.store.dialect import holds_connection
from engram.store.storage_faults import Fault, classify_sqlite, fault_error

SQLITE_MAGIC = b"SQLite format 3\x00"
LEFT = "it was left unchanged"


def _tables(path: Path) -> set[str]:
    """The file's table names, read without writing anything (not even a -shm file)."""
    # A WAL file beside it holds committed data only a WAL-aware reader sees; without one
    # the file is complete, and `immutable` reads it without creating -wal or -shm.
    wal = path.with_name(path.name + "-wal")
    mode = "mode=ro" if wal.exists() else "immutable=1"
    uri = f"file:{urllib.parse.quote(str(path))}?{mode}"
    connection = sqlite3.connect(uri, uri=True)
    try:
        rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {str(name) for (name,) in rows}
    finally:
        connection.close()


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(len(SQLITE_MAGIC))
    except OSError:
        return b""


def _what_is_wrong(path: Path) -> Exception | None:
    """Why `path` is not a store (missing, folder, unreadable, empty, foreign), or None."""
    if not path.exists():
        return StoreMissing(
            f"There is no store at {path}; create one, open the demo, or choose an existing store.",
            cli_message=f"There is no store at {path}; create one with 'engram init' or "
            "'engram demo', or point --store at an existing one.",
        )
    if path.is_dir():
        return NotAStore(
            f"{path} is a folder, not an Engram store; choose a store file.",
            cli_message=f"{path} is a folder, not an Engram store; point --store at a store file.",
        )
    if not stat.S_ISREG(path.stat().st_mode):
        # A FIFO or a device would block or stream forever on the first read.
        return NotAStore(
            f"{path} is not a regular file (it is a pipe, socket or device), so it is not an "
            f"Engram store; {LEFT} — choose a store file."
        )
    if not os.access(path, os.R_OK):
        return ReadOnlyStore(
            f"The file {path} cannot be read by this user (permission denied); nothing was "
            "changed — open it as a user who may read and write it."
        )
    if path.stat().st_size == 0:
        return NotAStore(
            f"The file {path} is empty, so it is not an Engram store; {LEFT} (remove it to "
            "create a store there)."
        )
    # Closing a descriptor of a file drops every POSIX lock this process holds on it, so a
    # file SQLite has open here (a second Store on it) is read only through SQLite.
    if not holds_connection(path) and _head(path) != SQLITE_MAGIC:
        return NotAStore(f"The file {path} is not an Engram store (not a SQLite database); {LEFT}.")
    unreadable = _unreadable_log(path)
    if unreadable is not None:
        return unreadable
    try:
        tables = _tables(path)
    except sqlite3.DatabaseError as error:
        fault = classify_sqlite(error, path.parent)
        if fault is not None and fault is not Fault.DAMAGED:  # a full disk is not damage
            return fault_error(fault, str(path), str(error), "open")
        return CorruptStore(
            f"The file {path} is a damaged SQLite database whose table list cannot be read; "
            f"{LEFT} — restore the store from a backup."
        )
    if "store_info" not in tables:
        return NotAStore(f"The file {path} is a SQLite database but not an Engram store; {LEFT}.")
    return None


def holds_store(path: Path) -> bool:
    """Whether `path` is (by its tables) an Engram store."""
    return path.exists() and _what_is_wrong(path) is None


def check_before_open(path: Path) -> bool:
    """Raise one true sentence unless `path` is a store Engram can open; True when it must
    be opened read-only (the file or its folder cannot be written: a copy on read-only
    media, say), so that nothing — no -wal, no -shm, no checkpoint — is written beside it."""
    wrong = _what_is_wrong(path)
    if wrong is not None:
        raise wrong
    return not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK))


def _unreadable_log(path: Path) -> ReadOnlyStore | None:
    """A write-ahead log with content, in a folder that cannot be written, without the -shm
    file SQLite needs to read it there (and cannot create)."""
    wal, shm = (path.with_name(path.name + end) for end in ("-wal", "-shm"))
    if os.access(path.parent, os.W_OK | os.X_OK) or shm.exists():
        return None
    if not (wal.exists() and wal.stat().st_size > 0):
        return None
    return ReadOnlyStore(
        f"The store {path} is read-only and its unfinished write-ahead log ({wal.name}) "
        "cannot be read there without the -shm file beside it; nothing was changed — copy "
        "the store with the files beside it to a folder you can write to."
    )


def check_folder_writable(path: Path, doing: str) -> None:
    """Refuse in one sentence when the folder a store lives in cannot be written."""
    folder = path.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ReadOnlyStore(
            f"Cannot {doing} the store {path}: its folder {folder} is read-only, and SQLite "
            "keeps its write-ahead log beside the store; this is not damage and nothing was "
            "changed — copy the store (with its .checkpoint file) to a folder you can write to."
        )
