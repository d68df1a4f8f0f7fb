"""A process holding a store keeps its hold when other code in it opens and closes the
store's file (store/lock_guard.py).

Found under Xvfb with openbox: after File › Save access report… had shown the store's
folder (the file dialog reads the start of each file to tell its type), the next CLI
command, seeing no other holder as it closed, checkpointed and deleted the WAL the window
was still writing through; every change the window then reported as saved was lost to
everyone else. Closing any descriptor of a file drops all of a process's POSIX locks on it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engram.control import persons
from engram.store import lock_guard
from engram.store.store import Store
from tests.conftest import PASSPHRASE

linux_only = pytest.mark.skipif(lock_guard.OFD_SETLK is None, reason="Linux OFD locks")

OTHER_PROCESS = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1])
print(connection.execute(sys.argv[2]).fetchone()[0])
connection.close()  # the last holder it sees checkpoints and deletes the WAL
"""


def _other_process(path: Path, query: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS, str(path), query],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _persons(path: Path) -> str:
    return _other_process(path, "SELECT group_concat(id, ',') FROM persons ORDER BY id")


@linux_only
def test_a_change_after_the_file_was_read_in_process_reaches_other_processes(
    store: Store, store_path: Path
) -> None:
    persons.ensure_person(store, "ada")
    with store_path.open("rb") as file:  # what a file dialog's type sniffing does
        file.read(64)
    assert _persons(store_path) == "ada"
    wal = store_path.with_name(store_path.name + "-wal")
    assert wal.exists(), "another process deleted the WAL this one writes through"
    persons.ensure_person(store, "bea")
    assert _persons(store_path) == "ada,bea"  # lost on the old code


@linux_only
def test_the_guard_lets_go_with_the_last_connection_so_the_wal_is_cleaned_up(
    store_path: Path,
) -> None:
    store = Store.create(str(store_path), passphrase=PASSPHRASE, use_keyring=False)
    persons.ensure_person(store, "ada")
    with store.read() as conn:
        conn.exec_driver_sql("SELECT count(*) FROM persons").scalar()
    assert _ofd_read_locks(store_path) == [(lock_guard.SHARED_FIRST, lock_guard.SHARED_SIZE)]
    store.close()
    assert _ofd_read_locks(store_path) == []
    assert not store_path.with_name(store_path.name + "-wal").exists()
    assert _persons(store_path) == "ada"


def _ofd_read_locks(path: Path) -> list[tuple[int, int]]:
    """The OFD read locks on `path` (from /proc/locks): (start, length) of each."""
    inode = path.stat().st_ino
    found = []
    for line in Path("/proc/locks").read_text(encoding="ascii").splitlines():
        fields = line.split()
        if "OFDLCK" not in fields or "->" in fields:
            continue
        at = fields.index("OFDLCK")
        kind, where, start, end = fields[at + 2], fields[at + 4], fields[at + 5], fields[at + 6]
        if kind == "READ" and int(where.rsplit(":", 1)[1]) == inode:
            found.append((int(start), int(end) - int(start) + 1))
    return found
