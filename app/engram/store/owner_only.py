"""Owner-only files and folders (issue 15 item 10), as gpg, ssh and pass keep theirs.

A store, its SQLite side files (-wal and -shm take the database file's mode when SQLite
creates them), its checkpoint, the checkpoint's lock and the anchors are 0600; folders
Engram creates are 0700 — whatever the umask. An existing store's files are tightened when
it is opened, where this user owns them, and never loosened: a file someone made stricter
stays so, and one this user cannot change is left as it is (the store still opens).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700
_GROUP_AND_OTHERS = 0o077
# A temporary file no writer has touched for this long was left by one that was killed.
STALE_AFTER_S = 60.0
SQLITE_SIDE_FILES = ("", "-wal", "-shm", "-journal")


def make_folders(folder: Path) -> None:
    """Create `folder` and its missing parents, each 0700; existing ones are left alone."""
    missing: list[Path] = []
    current = folder
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            continue  # another process made it first
        os.chmod(path, FOLDER_MODE)  # mkdir's mode is cut by the umask


def create_file(path: Path) -> None:
    """Create an empty file, 0600 (FileExistsError if there already is one)."""
    os.close(open_private(path, os.O_WRONLY | os.O_EXCL))


def open_private(path: Path, flags: int) -> int:
    """`os.open` with O_CREAT: a file it creates is 0600; one that exists is tightened."""
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    except FileExistsError:
        if flags & os.O_EXCL:
            raise
        fd = os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        _tighten_fd(fd)
        return fd
    with contextlib.suppress(OSError):
        os.fchmod(fd, FILE_MODE)
    return fd


def _tighten_fd(fd: int) -> None:
    info = os.fstat(fd)
    if info.st_uid == os.geteuid() and info.st_mode & _GROUP_AND_OTHERS:
        with contextlib.suppress(OSError):
            os.fchmod(fd, stat.S_IMODE(info.st_mode) & ~_GROUP_AND_OTHERS)


def tighten(path: Path) -> None:
    """Take group and other permissions off a file or folder this user owns (nothing
    happens when it is missing, someone else's, or cannot be changed)."""
    try:
        info = path.stat()
    except OSError:
        return
    if info.st_uid == os.geteuid() and info.st_mode & _GROUP_AND_OTHERS:
        with contextlib.suppress(OSError):
            os.chmod(path, stat.S_IMODE(info.st_mode) & ~_GROUP_AND_OTHERS)


def tighten_sqlite_files(db_path: Path) -> None:
    """The database file first (SQLite gives a new -wal or -shm its mode), then its side files."""
    for suffix in SQLITE_SIDE_FILES:
        tighten(db_path.with_name(db_path.name + suffix))


def remove_stale(folder: Path, pattern: str, older_than_s: float = STALE_AFTER_S) -> None:
    """Remove files matching `pattern` in `folder` untouched for `older_than_s` (what a
    killed writer left); a file being written now is younger and stays."""
    cutoff = time.time() - older_than_s
    try:
        leftovers = list(folder.glob(pattern))
    except OSError:
        return
    for leftover in leftovers:
        with contextlib.suppress(OSError):
            if leftover.is_file() and leftover.stat().st_mtime < cutoff:
                leftover.unlink()
