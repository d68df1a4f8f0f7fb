"""A second process for tests that need one: `python -m tests.store_worker ACTION ...`.

- `hold-engram STORE READY SECONDS`: open the store as Engram does (passphrase from
  ENGRAM_TEST_PASSPHRASE) and keep one read transaction going, a statement every 20 ms,
  the way a long export or verify does; prints "released" if it was asked to let go.
- `hold-sqlite STORE READY SECONDS`: a program that is not Engram (the sqlite3 shell, a
  backup tool) holding a read transaction open without a statement running.
- `hold-write STORE READY SECONDS`: another program holding the store's write lock (as a
  long `engram import` does), then letting it go without writing.

READY is a file created once the read transaction holds its snapshot.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path


def hold_engram(store_path: str, ready: Path, seconds: float) -> str:
    from sqlalchemy import text

    from engram.model.errors import StoreReleased
    from engram.store.store import Store

    store = Store.open(store_path, passphrase=os.environ["ENGRAM_TEST_PASSPHRASE"])
    deadline = time.monotonic() + seconds
    try:
        with store.read() as conn:
            conn.execute(text("SELECT count(*) FROM journal_payloads")).scalar()
            ready.touch()
            while time.monotonic() < deadline:
                conn.execute(text("SELECT count(*) FROM log_payloads")).scalar()
                time.sleep(0.02)
    except StoreReleased:
        return "released"
    finally:
        store.close()
    return "held"


def hold_sqlite(store_path: str, ready: Path, seconds: float) -> str:
    raw = sqlite3.connect(store_path, isolation_level=None)
    raw.execute("BEGIN")
    raw.execute("SELECT count(*) FROM journal_payloads").fetchone()
    ready.touch()
    time.sleep(seconds)
    raw.execute("COMMIT")
    raw.close()
    return "held"


def hold_write(store_path: str, ready: Path, seconds: float) -> str:
    raw = sqlite3.connect(store_path, isolation_level=None)
    raw.execute("BEGIN IMMEDIATE")
    ready.touch()
    time.sleep(seconds)
    raw.execute("ROLLBACK")
    raw.close()
    return "held"


def erase(store_path: str, person: str) -> str:
    """Erase a person as `engram person erase` does, saying "erasing" just before, so a test
    can kill the process at a chosen moment of the erase itself."""
    from engram.control.erase import erase_person
    from engram.control.session import PersonSession
    from engram.store.store import Store

    store = Store.open(store_path, passphrase=os.environ["ENGRAM_TEST_PASSPHRASE"])
    session = PersonSession.open(store, person, "staff:dana")
    print("erasing", flush=True)
    erase_person(session, person)
    store.close()
    return "erased"


def main(argv: list[str]) -> int:
    if argv[0] == "erase":
        print(erase(argv[1], argv[2]), flush=True)
        return 0
    action, store_path, ready, seconds = argv
    hold = {"hold-engram": hold_engram, "hold-sqlite": hold_sqlite, "hold-write": hold_write}[
        action
    ]
    print(hold(store_path, Path(ready), float(seconds)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def run_cli(
    store_path: Path, *args: str, crash_at: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`engram --store STORE --passphrase-env … ARGS` in a process of its own; with
    `crash_at`, that process kills itself with SIGKILL at the named point (store/faults.py)."""
    from tests.conftest import PASSPHRASE

    env = {**os.environ, "ENGRAM_TEST_PASSPHRASE": PASSPHRASE}
    env.pop("ENGRAM_CRASH_AT", None)
    if crash_at:
        env["ENGRAM_CRASH_AT"] = crash_at
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "engram.cli.main",
            "--store",
            str(store_path),
            "--passphrase-env",
            "ENGRAM_TEST_PASSPHRASE",
            *args,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
