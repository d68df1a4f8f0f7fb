"""A folder seen as read-only media sees it, for tests of issue 17 item 12.

As an ordinary user, permissions do it (0555 on the folder, 0444 on its files). Root is not
stopped by permissions, so there the folder is shown through a read-only bind mount — which
needs the power to mount; where even that is refused, the test is skipped and says why.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[Path]:
    """Yield a path to `folder`'s contents where nothing can be written, put back after."""
    files = [path for path in folder.iterdir() if path.is_file()]
    if os.geteuid() != 0:
        for path in files:
            path.chmod(0o444)
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)
            for path in files:
                path.chmod(0o644)
        return
    mount, umount = shutil.which("mount"), shutil.which("umount")
    if mount is None or umount is None:
        pytest.skip("running as root, and there is no mount command to make read-only media")
    view = folder.with_name(folder.name + "-read-only")
    view.mkdir()
    bound = subprocess.run([mount, "--bind", str(folder), str(view)], capture_output=True)
    if bound.returncode != 0:
        with contextlib.suppress(OSError):
            view.rmdir()
        pytest.skip(f"running as root without the power to mount: {bound.stderr.decode().strip()}")
    try:
        sealed = subprocess.run(
            [mount, "-o", "remount,ro,bind", str(view)], capture_output=True, text=True
        )
        if sealed.returncode != 0:
            pytest.skip(f"a read-only bind mount was refused: {sealed.stderr.strip()}")
        yield view
    finally:
        if subprocess.run([umount, str(view)], capture_output=True).returncode != 0:
            subprocess.run([umount, "-l", str(view)], capture_output=True)  # still held: lazily
        with contextlib.suppress(OSError):
            view.rmdir()
