"""A guard that keeps a process's hold on a SQLite store when some other code in the
process opens and closes the store's file.

POSIX advisory locks belong to a process, and closing *any* descriptor of a file releases
all of that process's locks on it (SQLite's "How To Corrupt An SQLite Database File",
§2.2). Engram's own code never does that (file_scan.py runs in a child), but the window's
process also runs code nobody here wrote: a file dialog showing the store's folder reads the
start of each file to tell its type. Found under Xvfb: after File › Save access report…
had shown the store's folder, the next CLI command to close the store, seeing no other
holder, checkpointed and deleted the WAL the window was still writing through, and every
later change the window reported as saved was lost to everyone else.

So, while a process has connections to a store, it also holds Linux open-file-description
(OFD) read locks on its own descriptor: on the database's SHARED range (which a closing
connection must lock exclusively before it deletes the WAL) and on the shared memory's
"DMS" byte (which a newcomer must lock exclusively before it resets the WAL index). OFD
locks belong to the descriptor, not the process: closing another descriptor leaves them,
and they conflict with the record locks SQLite takes. They are let go before this
process's last connection closes, so that one still cleans up the WAL as usual. Where the
system has no OFD locks (not Linux), nothing is added: SQLite's own locks are all there is.
"""

from __future__ import annotations

import contextlib
import os
import struct
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not a POSIX system
    fcntl = None  # type: ignore[assignment]

# SQLite's lock bytes (os_unix.c): the database's SHARED range, and the -shm's DMS byte.
PENDING_BYTE = 0x40000000
SHARED_FIRST = PENDING_BYTE + 2
SHARED_SIZE = 510
SHM_DMS = (22 + 8) * 4 + 8  # UNIX_SHM_BASE + SQLITE_SHM_NLOCK
_FLOCK = "hhqqi4x"  # struct flock on Linux: type, whence, start, len, pid (0 for OFD)
OFD_SETLK: int | None = getattr(fcntl, "F_OFD_SETLK", None) if fcntl is not None else None


def _read_lock(fd: int, start: int, length: int) -> bool:
    assert fcntl is not None and OFD_SETLK is not None
    request = struct.pack(_FLOCK, fcntl.F_RDLCK, os.SEEK_SET, start, length, 0)
    try:
        fcntl.fcntl(fd, OFD_SETLK, request)
    except OSError:  # another process holds it exclusively this instant: go without
        return False
    return True


class LockGuard:
    """OFD read locks on one store's files, held from `hold()` to `release()`."""

    def __init__(self, path: Path) -> None:
        self.parts = (
            (path, SHARED_FIRST, SHARED_SIZE),
            (path.with_name(path.name + "-shm"), SHM_DMS, 1),
        )
        self._fds: dict[Path, int] = {}  # opened, kept open until release
        self._locked: set[Path] = set()

    @property
    def locked(self) -> set[Path]:
        """The files whose lock is held now."""
        return set(self._locked)

    def hold(self) -> None:
        """Take what is not held yet (the -shm exists only after a first read). A
        descriptor once opened stays open until `release`: closing it would drop this
        process's locks, the very thing guarded against."""
        if OFD_SETLK is None:
            return
        for file, start, length in self.parts:
            if file in self._locked:
                continue
            if file not in self._fds:
                try:
                    self._fds[file] = os.open(file, os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    continue
            if _read_lock(self._fds[file], start, length):
                self._locked.add(file)

    def release(self) -> None:
        """Let go (closing the descriptors: only when this process lets go of the store)."""
        fds, self._fds, self._locked = self._fds, {}, set()
        for fd in fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
