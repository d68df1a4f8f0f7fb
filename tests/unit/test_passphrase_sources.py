"""Issue 20 item 7: a script gives the passphrase by file or file descriptor."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.conftest import PASSPHRASE


def test_passphrase_file_opens_the_store(cli: Any, tmp_path: Path) -> None:
    """Issue 20 item 7: --passphrase-file FILE unlocks; a wrong one does not."""
    assert cli("init").code == 0
    good = tmp_path / "good"
    good.write_text(PASSPHRASE + "\n", encoding="utf-8")
    assert cli("--passphrase-file", str(good), "persons", passphrase=False).code == 0
    bad = tmp_path / "bad"
    bad.write_text("not the passphrase\n", encoding="utf-8")
    assert cli("--passphrase-file", str(bad), "persons", passphrase=False).code != 0


def test_passphrase_fd_opens_the_store(cli: Any) -> None:
    """Issue 20 item 7: --passphrase-fd N reads the passphrase from a pipe."""
    assert cli("init").code == 0
    read_end, write_end = os.pipe()
    os.write(write_end, (PASSPHRASE + "\n").encode())
    os.close(write_end)
    try:
        result = cli("--passphrase-fd", str(read_end), "persons", passphrase=False)
    finally:
        os.close(read_end)
    assert result.code == 0, result.err
