"""A small tmpfs of a test's own, to fill up (issue 15, item 5): mounted when the tests
run as root, skipped with the reason elsewhere."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

DISK_BYTES = 4 << 20


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs, so filling it fills nothing else."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root (run the suite as root to include it)")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES},mode=0700", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip()})")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path, room: int) -> Path:
    """Fill the disk until only `room` bytes (rounded to its blocks) are left; the filler
    file, to delete when space should come back."""
    stats = os.statvfs(disk)
    filler = disk / "filler"
    with open(filler, "ab") as handle:
        try:
            handle.write(b"\0" * max(0, stats.f_bavail * stats.f_frsize - room))
            handle.flush()
        except OSError:  # full before the last block: as full as it gets
            pass
    return filler
