"""Issue 17 item 8, "No single call holds the UI": Verify runs in a child process.

Walking every chain of a 100k-note store in a worker thread held the interpreter, and so
the window, for a second at a time (its allocations' generation-2 collections). Now a
child process opens the store read-only and verifies it (control/verify_process.py): its
report is the one verify gives in process, on an intact store and on a tampered one;
Cancel and lock kill it, and nothing of it shows afterwards.

To hold the real child in mid-walk, a test stops it (SIGSTOP) as soon as it is started:
that is a verify that takes as long as the test wants, in a real process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.control import forensics
from engram.control.verify_process import verify_in_child
from engram.gui.controllers.audit import NOT_CHECKED
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.forensics import ERASED, OTHER, fill
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, show_tab, unlock, wait_idle

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="POSIX signals")


def _alive(pid: int) -> bool:
    """Whether the process exists (the parent reaps its child, so a killed one is gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _copy(source: Path, target: Path) -> Path:
    shutil.copy(source, target)
    checkpoint = source.with_name(source.name + ".checkpoint")
    shutil.copy(checkpoint, target.with_name(target.name + ".checkpoint"))
    return target


def _tamper(path: Path) -> None:
    """A journal entry deleted behind Engram's back (verify names it)."""
    with contextlib.closing(sqlite3.connect(path)) as raw, raw:
        raw.execute("delete from journal where person='maya' and seq=4")


@pytest.mark.parametrize("tampered", [False, True], ids=["demo", "tampered demo"])
def test_issue17_item8_verify_in_a_child_reports_exactly_what_verify_in_process_does(
    demo_path: Path, tmp_path: Path, tampered: bool
) -> None:
    if tampered:
        _tamper(demo_path)
    twin = _copy(demo_path, tmp_path / "twin.engram")  # the same bytes, verified in process
    store = Store.open(str(demo_path), passphrase=PASSPHRASE)
    steps: list[tuple[int, int]] = []
    try:
        in_child = verify_in_child(store, lambda done, total: steps.append((done, total)))
    finally:
        store.close()
    twin_store = Store.open(str(twin), passphrase=PASSPHRASE)
    try:
        in_process = forensics.verify_store(twin_store)
    finally:
        twin_store.close()
    assert in_child == in_process
    assert in_child.ok is not tampered
    if tampered:
        assert any("journal:maya: entry 4 is missing" in p for p in in_child.problems)
    assert steps and steps[-1][0] == steps[-1][1]  # its progress came up the pipe


def test_issue17_item8_a_child_verifies_a_keyring_store_with_erasures_as_in_process(
    store: Store,
) -> None:
    """The OS keyring is the parent's (here a keyring in this process only): the child
    is given the anchor the parent read there, and its report is the same."""
    fill(store, ERASED, OTHER)
    assert store.anchors.in_keyring()
    in_child = verify_in_child(store)
    in_process = forensics.verify_store(store)
    assert in_child == in_process
    assert in_child.ok and not in_child.warnings


@pytest.fixture
def stopped_children() -> Iterator[list[int]]:
    """Children a test stopped: never left stopped behind it."""
    stopped: list[int] = []
    yield stopped
    for pid in stopped:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _start_and_hold(qtbot: Any, inspector: Inspector, stopped: list[int]) -> int:
    """Verify from the window; its child, stopped in mid-walk, as soon as it exists."""
    audit = inspector.controller.audit
    audit.verify_pid = None
    inspector.window.verify_action.trigger()
    qtbot.waitUntil(lambda: audit.verify_pid is not None, timeout=SIGNAL_TIMEOUT)
    pid = audit.verify_pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    stopped.append(pid)
    return pid


def test_issue17_item8_the_windows_verify_runs_in_another_process_and_shows_its_report(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    twin = Store.open(str(_copy(demo_path, tmp_path / "twin.engram")), passphrase=PASSPHRASE)
    expected = forensics.verify_store(twin)
    twin.close()
    unlock(qtbot, inspector, demo_path)
    with qtbot.waitSignal(inspector.controller.verified, timeout=SIGNAL_TIMEOUT):
        inspector.window.verify_action.trigger()
    wait_idle(qtbot, inspector)
    pid = inspector.controller.audit.verify_pid
    assert pid is not None and pid != os.getpid()
    assert not _alive(pid)  # it ended with its report
    assert inspector.window.audit.result.text().splitlines()[0] == expected.sentence()
    assert inspector.window.integrity_label.text() == "integrity: ✔ verified"


def test_issue17_item8_cancel_kills_the_verifying_process(
    qtbot: Any, inspector: Inspector, demo_path: Path, stopped_children: list[int]
) -> None:
    unlock(qtbot, inspector, demo_path)
    pid = _start_and_hold(qtbot, inspector, stopped_children)
    assert _alive(pid) and pid != os.getpid()
    qtbot.mouseClick(inspector.window.audit.cancel_button, _left())
    qtbot.waitUntil(lambda: not _alive(pid), timeout=SIGNAL_TIMEOUT)
    wait_idle(qtbot, inspector)
    assert inspector.window.audit.result.text() == "Verify was cancelled."
    assert inspector.window.integrity_label.text() == NOT_CHECKED
    assert inspector.controller.tasks.jobs == []


def test_issue17_item8_lock_kills_the_verifying_process_and_nothing_of_it_shows(
    qtbot: Any, inspector: Inspector, demo_path: Path, stopped_children: list[int]
) -> None:
    unlock(qtbot, inspector, demo_path)
    pid = _start_and_hold(qtbot, inspector, stopped_children)
    inspector.controller.lock("Locked.")
    qtbot.waitUntil(lambda: not _alive(pid), timeout=SIGNAL_TIMEOUT)
    assert inspector.controller.tasks.jobs == []
    unlock(qtbot, inspector, demo_path)
    show_tab(qtbot, inspector, inspector.window.audit)
    time.sleep(0.3)  # anything the killed verify still had to say would arrive now
    qtbot.wait(50)
    audit = inspector.window.audit
    assert "intact" not in audit.result.text().lower()
    assert audit.progress.value() <= 0
    assert not audit.cancel_button.isEnabled()
    assert inspector.window.integrity_label.text() == NOT_CHECKED
    assert inspector.controller.tasks.jobs == []


def _left() -> Any:
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton
