"""Issue 20 items 5 and 6: the package carries current copies of what it reads, the
checkpoint's lock needs no POSIX-only module of its own and still excludes other processes,
and the metadata and guides name only the platform the tests run on."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

from engram.store.checkpoint import CheckpointFile

ROOT = Path(__file__).resolve().parents[2]


def test_issue20_item5_the_packaged_copies_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "sync_package_data.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_issue20_item6_the_checkpoint_module_imports_without_fcntl() -> None:
    """Where fcntl does not exist (as on Windows) the store's checkpoint still imports: the
    lock is filelock's, which uses each platform's own call."""
    probe = (
        "import sys; sys.modules['fcntl'] = None; "
        "import engram.store.checkpoint as c; print(c.filelock.FileLock.__name__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "app"), str(ROOT)])},
    )
    assert done.returncode == 0, done.stderr


HOLD = """
import sys, time
from pathlib import Path
from engram.store.checkpoint import CheckpointFile
with CheckpointFile(Path(sys.argv[1]), "s", bytes(32), str).locked():
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
print("released", flush=True)
"""


def test_issue20_item6_the_lock_excludes_another_process_and_another_thread(
    tmp_path: Path,
) -> None:
    store = tmp_path / "s.engram.checkpoint"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(store), "0.6"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "app"), str(ROOT)])},
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    started = time.monotonic()
    checkpoint = CheckpointFile(store, "s", bytes(32), str)
    with checkpoint.locked():
        waited = time.monotonic() - started
        assert holder.stdout.readline().strip() == "released"  # we got it only after
        # Another thread of this process waits for it too (its own descriptor)
        entered = threading.Event()
        other = threading.Thread(target=lambda: _enter(checkpoint, entered))
        other.start()
        assert not entered.wait(0.3)
    other.join(5)
    assert entered.is_set()
    holder.wait(5)
    assert waited > 0.3
    assert (store.with_name(store.name + ".lock").stat().st_mode & 0o077) == 0  # owner only


def _enter(checkpoint: CheckpointFile, entered: threading.Event) -> None:
    with checkpoint.locked():
        entered.set()


def test_issue20_item6_metadata_and_guides_name_only_the_tested_platform() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    systems = [c for c in project["classifiers"] if c.startswith("Operating System ::")]
    assert systems == ["Operating System :: POSIX :: Linux"]
    guides = [*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]
    for guide in guides:
        text = guide.read_text(encoding="utf-8")
        for untested in ("Keychain", "Credential Manager"):
            assert untested not in text, f"{guide.name} names the {untested}"
