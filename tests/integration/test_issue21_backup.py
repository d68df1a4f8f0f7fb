"""Issue 21 item 1: `engram backup` writes a consistent, owner-only snapshot of a live store
with its checkpoint (DESIGN Durability: the backup API / VACUUM INTO, never a file copy);
`engram restore` puts it back, re-anchored, and verify passes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from engram.store.store import Store
from tests.conftest import PASSPHRASE


def test_item1_backup_while_another_process_writes_verifies_and_restores(
    cli: Any, store_path: Path, tmp_path: Path
) -> None:
    Store.create(str(store_path), passphrase=PASSPHRASE, use_keyring=False).close()
    ready, stop = tmp_path / "ready", tmp_path / "stop"
    env = {**os.environ, "ENGRAM_TEST_PASSPHRASE": PASSPHRASE}
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.note_writer", str(store_path), "p1", str(ready), str(stop)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert writer.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        backup = tmp_path / "backup.engram"
        taken = cli("backup", str(backup))
        assert taken.code == 0, taken.err
    finally:
        stop.touch()
        writer.communicate(timeout=60)
    for made in (backup, backup.with_name(backup.name + ".checkpoint")):
        assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert cli("verify", store=backup).code == 0
    assert cli("backup", str(backup)).code == 1  # never overwritten unless asked
    opened = Store.open(str(backup), passphrase=PASSPHRASE)
    opened.close()

    assert cli("restore", str(backup), "--to", str(store_path)).code == 1  # live store kept
    restored = cli("restore", str(backup), "--to", str(store_path), "--replace")
    assert restored.code == 0, restored.err
    checked = cli("verify")
    assert checked.code == 0, checked.out
