"""What a database (or file) error means for the person who met it.

Only damage — SQLite's SQLITE_CORRUPT or SQLITE_NOTADB, PostgreSQL's data_corrupted or
index_corrupted — invites a restore from a backup. A full disk, an input/output error, a
read-only file or a database server that does not answer is a fault of what lies under the
store: its sentence says what failed and what became of the change, and never calls the
store damaged (issue 15, item 5).

Errors are told apart by the database's own codes: SQLite's primary result codes
(`sqlite3.Error.sqlite_errorcode`, https://sqlite.org/rescode.html) and PostgreSQL's
SQLSTATE (`sqlstate` on psycopg's errors). Message text decides only where no code exists:
the sqlite3 module's own "Could not decode to UTF-8" carries none.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from sqlalchemy import exc, make_url

from engram.model.errors import (
    DiskFull,
    EngramError,
    ReadOnlyStore,
    ServerUnreachable,
    StorageFault,
    UnreadableData,
)
from engram.store.dialect import sqlite_path
from engram.store.location import describe


class Fault(enum.Enum):
    """What kind of failure a database error is."""

    DAMAGED = "damaged"
    FULL = "full"
    READ_ONLY = "read-only"
    IO = "io"
    UNREACHABLE = "unreachable"


# SQLite primary result codes: PERM, READONLY, IOERR, CORRUPT, FULL, CANTOPEN, NOTADB.
_SQLITE = {
    3: Fault.READ_ONLY,
    8: Fault.READ_ONLY,
    10: Fault.IO,
    11: Fault.DAMAGED,
    13: Fault.FULL,
    14: Fault.IO,
    26: Fault.DAMAGED,
}
# PostgreSQL SQLSTATEs: data_corrupted, index_corrupted, disk_full, io_error,
# read_only_sql_transaction, and the shutdowns that end a session (admin, crash, starting up).
_POSTGRES = {
    "XX001": Fault.DAMAGED,
    "XX002": Fault.DAMAGED,
    "53100": Fault.FULL,
    "58030": Fault.IO,
    "25006": Fault.READ_ONLY,
    "57P01": Fault.UNREACHABLE,
    "57P02": Fault.UNREACHABLE,
    "57P03": Fault.UNREACHABLE,
}
_OS = {
    errno.ENOSPC: Fault.FULL,
    errno.EDQUOT: Fault.FULL,
    errno.EROFS: Fault.READ_ONLY,
    errno.EACCES: Fault.READ_ONLY,
    errno.EPERM: Fault.READ_ONLY,
    errno.EIO: Fault.IO,
}
# An I/O error with less room than this left is a full disk: SQLite reports a -shm file it
# cannot grow (SQLITE_IOERR_SHMSIZE) or a WAL it cannot extend as an I/O error.
NEARLY_FULL_BYTES = 1 << 20

Doing = Literal["open", "read", "write", "commit", "unknown"]


def disk_full(folder: Path) -> bool:
    """Whether the file system holding `folder` has (next to) no room or no free inodes."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return False
    blocks = stats.f_bfree if os.geteuid() == 0 else stats.f_bavail  # root may use reserve
    no_inodes = stats.f_files > 0 and stats.f_ffree == 0
    return blocks * stats.f_frsize < NEARLY_FULL_BYTES or no_inodes


def classify_sqlite(error: BaseException, folder: Path | None = None) -> Fault | None:
    """The fault a sqlite3 error reports, by its result code; None for any other error."""
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int):
        fault = _SQLITE.get(code & 0xFF)
        if fault is Fault.IO and folder is not None and disk_full(folder):
            return Fault.FULL
        return fault
    if isinstance(error, sqlite3.Error) and "could not decode" in str(error).lower():
        return Fault.DAMAGED  # text that is not UTF-8: the module's own error, no code
    return None


def classify(error: exc.DBAPIError, folder: Path | None = None) -> Fault | None:
    """The fault a database error reports; None when it is none of them (a bug, a busy
    database, a constraint)."""
    orig = error.orig
    if isinstance(orig, sqlite3.Error):
        return classify_sqlite(orig, folder)
    sqlstate = getattr(orig, "sqlstate", None)
    if isinstance(sqlstate, str):
        if sqlstate in _POSTGRES:
            return _POSTGRES[sqlstate]
        if sqlstate.startswith("08"):  # connection_exception and its subclasses
            return Fault.UNREACHABLE
    if error.connection_invalidated:
        return Fault.UNREACHABLE
    if isinstance(error, exc.OperationalError) and sqlstate is None:
        # psycopg gives no SQLSTATE when it never reached the server, or lost it mid-way.
        return Fault.UNREACHABLE
    return None


def classify_os(error: OSError) -> Fault | None:
    """The fault an OSError reports (a full disk, a read-only one, an I/O error), or None."""
    return _OS.get(error.errno or 0)


def server(url: str) -> str:
    """HOST:PORT of a database server URL, as a person would write it."""
    parsed = make_url(url)
    host = parsed.host or str(parsed.query.get("host") or "localhost")
    port = parsed.port or (5432 if parsed.get_backend_name() == "postgresql" else None)
    return f"{host}:{port}" if port else host


def _short(detail: str) -> str:
    """A driver's message cut to its first line's last clause ("Connection refused")."""
    first = detail.strip().splitlines()[0] if detail.strip() else ""
    return first.rsplit(": ", 1)[-1].strip() or first


def _outcome(doing: Doing) -> str:
    return {
        "open": "nothing was changed",
        "read": "nothing was changed",
        "write": "nothing was written",
        "commit": "the change may or may not have been saved, so look before you retry",
        "unknown": "what was under way may not have finished, so verify the store once that "
        "is fixed",
    }[doing]


def fault_error(
    fault: Fault, where: str, detail: str, doing: Doing, *, remote: str | None = None
) -> EngramError:
    """The one sentence for a fault of the store at `where` (`remote`: HOST:PORT of its
    database server, for a store that is not a file)."""
    outcome = _outcome(doing)
    if fault is Fault.DAMAGED:
        start = f"The store at {where} is damaged ({detail})"
        return UnreadableData(
            f"{start}; verify its integrity to see where, and restore it from a backup.",
            cli_message=f"{start}; run 'engram verify' to see where, and restore it from a backup.",
            detail=detail,
        )
    if fault is Fault.READ_ONLY:
        return ReadOnlyStore(
            f"The store at {where} cannot be written (it or its folder is read-only); "
            f"{outcome} — make both writable and try again."
        )
    if fault is Fault.UNREACHABLE:
        return ServerUnreachable(
            f"The database server at {remote or where} does not answer ({_short(detail)}); "
            f"{outcome} — start it or check the address, then try again."
        )
    if fault is Fault.FULL:
        if remote is not None:
            return DiskFull(
                f"The disk of the database server at {remote} is full; {outcome} — free "
                "some space there and try again."
            )
        why = ""
        if doing in ("open", "read"):
            why = " (SQLite needs a little room beside a store even to read it)"
        return DiskFull(
            f"The disk holding the store at {where} is full{why}; {outcome} — free some space "
            "and try again."
        )
    return StorageFault(
        f"Reading or writing the files of the store at {where} failed ({detail}); {outcome} "
        "— that is a fault of the disk or its file system, not known damage to the store: "
        "check them and try again."
    )


def from_database(error: exc.DBAPIError, url: str, doing: Doing) -> EngramError | None:
    """A database error of the store at `url` as its one sentence, or None when it is no
    fault a person can act on (then it is a bug, and stays one)."""
    path = sqlite_path(url)
    fault = classify(error, path.parent if path is not None else None)
    if fault is None:
        return None
    remote = None if path is not None else server(url)
    return fault_error(fault, describe(url), str(error.orig), doing, remote=remote)


@contextlib.contextmanager
def faults_of(url: str, doing: Doing) -> Iterator[None]:
    """Raise a fault of the store at `url` as its sentence; other errors pass unchanged."""
    try:
        yield
    except exc.DBAPIError as error:
        mapped = from_database(error, url, doing)
        if mapped is None:
            raise
        raise mapped from None


def escaped_fault(error: BaseException, url: str) -> EngramError | None:
    """The sentence for a fault that reached a face without the store naming it (a file
    beside the store that could not be written, say): what failed, never a traceback;
    None for anything that is not a fault (a bug stays a bug)."""
    if isinstance(error, exc.DBAPIError):
        return from_database(error, url, "unknown")
    if not isinstance(error, OSError):
        return None
    fault = classify_os(error)
    if fault is None:
        return None
    what = f"writing {error.filename}" if error.filename else "a file operation"
    detail = f"{what} failed: {error.strerror or error}"
    if fault is Fault.FULL:
        path = sqlite_path(url)
        where = describe(url) if path is not None else str(error.filename or describe(url))
        return DiskFull(
            f"The disk holding the store at {where} is full ({detail}); free some space, "
            f"then verify the store to see what was kept."
        )
    return fault_error(fault, describe(url), detail, "unknown")
