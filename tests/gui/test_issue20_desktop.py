"""Issue 20 item 12, desktop conventions, on real widgets offscreen: File › Open recent,
Help › User guide (the guide shipped inside the package), and one window per store (a
second `engram desk STORE` brings the first window to the front and exits 0)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices

from engram.gui import resources, single_instance
from engram.gui.controllers.store_lock import RECENT_STORES
from engram.gui.single_instance import StoreWindowServer
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, unlock

ROOT = Path(__file__).resolve().parents[2]


def _recent_entries(inspector: Inspector) -> list[tuple[str, bool, Any]]:
    menu = inspector.window.open_recent_menu
    menu.aboutToShow.emit()  # what opening the menu does
    return [(a.text(), a.isEnabled(), a.data()) for a in menu.actions() if not a.isSeparator()]


def test_issue20_item12_open_recent_lists_stores_greys_missing_ones_and_opens_one(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    gone = tmp_path / "moved away.engram"
    store_lock = inspector.controller.store_lock
    store_lock.set_recent_stores([str(gone), str(demo_path)])
    entries = _recent_entries(inspector)
    assert entries[0] == (f"{gone} (not found)", False, str(gone))
    assert entries[1] == (f"&2 {demo_path}", True, str(demo_path))
    # Choosing it from an open store: that store locks, the chosen one waits for its key.
    unlock(qtbot, inspector, demo_path)
    assert _recent_entries(inspector)[0][2] == str(demo_path)  # the one opened comes first
    recent = next(
        a for a in inspector.window.open_recent_menu.actions() if a.data() == str(demo_path)
    )
    with qtbot.waitSignal(inspector.controller.locked, timeout=SIGNAL_TIMEOUT):
        recent.trigger()
    page = inspector.window.unlock_page
    assert page.store.currentText() == str(demo_path)
    # Remove missing stores keeps the rest; Clear the list empties it.
    prune = next(a for a in inspector.window.open_recent_menu.actions() if "missing" in a.text())
    assert prune.isEnabled()
    prune.trigger()
    assert store_lock.recent_stores() == [str(demo_path)]
    assert [e[2] for e in _recent_entries(inspector)][:1] == [str(demo_path)]
    clear = next(a for a in inspector.window.open_recent_menu.actions() if "Clear" in a.text())
    clear.trigger()
    assert store_lock.recent_stores() == []
    assert _recent_entries(inspector)[0][:2] == ("No recent stores", False)


def test_issue20_item12_open_recent_keeps_at_most_eight(inspector: Inspector) -> None:
    store_lock = inspector.controller.store_lock
    store_lock.set_recent_stores([f"/nowhere/{n}.engram" for n in range(12)])
    assert len(store_lock.recent_stores()) == RECENT_STORES == 8
    assert len([e for e in _recent_entries(inspector) if e[2]]) == 8


class _Opened(QObject):
    """Where the desktop would open a file URL: Qt's own hook for a scheme's handler."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def test_issue20_item12_help_user_guide_opens_the_guide_inside_the_package(
    inspector: Inspector,
) -> None:
    guide = resources.user_guide()
    assert guide.is_file()
    assert guide.is_relative_to(Path(single_instance.__file__).parents[1] / "data")
    assert guide.read_bytes() == (ROOT / "docs" / "user-guide.md").read_bytes()
    for image in ("main-1024x700.png", "note-detail.png"):  # what the guide shows is there
        assert (guide.parent / "screenshots" / image).is_file()
    opened = _Opened()
    QDesktopServices.setUrlHandler("file", opened, "open")
    try:
        inspector.window.user_guide_action.trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert opened.urls == [QUrl.fromLocalFile(str(guide))]
    assert opened.urls[0].isLocalFile() and Path(opened.urls[0].toLocalFile()) == guide
    assert inspector.prompts.errors == []


@pytest.fixture
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private runtime folder (short: a socket's path has a length limit)."""
    folder = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
    folder.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_issue20_item12_a_second_desk_on_the_store_raises_the_first_and_exits_0(
    qtbot: Any, inspector: Inspector, demo_path: Path, runtime_dir: Path, tmp_path: Path
) -> None:
    server = StoreWindowServer(inspector.window)
    assert server.serve(str(demo_path))
    inspector.window.showMinimized()
    spelled_otherwise = tmp_path / "link.engram"  # another spelling of the same store
    spelled_otherwise.symlink_to(demo_path)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "app"), str(ROOT)]),
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_RUNTIME_DIR": str(runtime_dir),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    with qtbot.waitSignal(server.raised, timeout=30_000):
        second = subprocess.Popen(
            [sys.executable, "-m", "engram", "desk", str(spelled_otherwise)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
    qtbot.waitUntil(lambda: second.poll() is not None, timeout=30_000)
    out, err = second.communicate()
    assert second.returncode == 0, err
    assert "already has" in out and "brought to the front" in out
    assert not inspector.window.isMinimized() and inspector.window.isVisible()
    server.close()


def test_issue20_item12_one_socket_per_store_and_a_dead_one_is_taken_over(
    inspector: Inspector, demo_path: Path, runtime_dir: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.engram"
    assert single_instance.socket_name(str(demo_path)) != single_instance.socket_name(str(other))
    assert single_instance.store_key(str(demo_path)) == single_instance.store_key(
        str(demo_path.parent / "." / demo_path.name)
    )
    # A window that crashed left its socket file: nobody answers it, and it is taken over.
    name = single_instance.socket_name(str(demo_path))
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(name)
    dead.close()
    assert Path(name).exists()
    assert not single_instance.ask_to_raise(str(demo_path))
    server = StoreWindowServer(inspector.window)
    assert server.serve(str(demo_path))
    # A second window for the same store is refused its name while the first lives.
    rival = StoreWindowServer(inspector.window)
    assert not rival.serve(str(demo_path))
    assert rival.serve(str(other))  # and takes its own store's
    rival.close()
    server.close()
