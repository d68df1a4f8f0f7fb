"""Unlocking: right and wrong passphrase, damaged store, missing keyring, the idle lock."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import keyring
from PySide6.QtCore import Qt

from engram.store.crypto import KdfParams
from engram.store.store import Store
from tests.conftest import PASSPHRASE, NoKeyring
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, unlock, wait_idle
from tests.hostile_store import set_kdf_limits
from tests.small_disk import fill, small_disk

__all__ = ["small_disk"]  # the fixture, used by name below


def _try(qtbot: Any, inspector: Inspector, path: Path, passphrase: str) -> str:
    page = inspector.window.unlock_page
    page.set_recent([], str(path))  # as Browse… does
    page.passphrase.clear()
    qtbot.keyClicks(page.passphrase, passphrase)
    with qtbot.waitSignal(inspector.controller.failed, timeout=SIGNAL_TIMEOUT) as blocker:
        qtbot.keyClick(page.passphrase, Qt.Key.Key_Return)
    return str(blocker.args[0])


def test_right_passphrase_opens_the_people_and_notes(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    window = inspector.window
    assert window.stack.currentWidget() is window.inspector
    assert window.people.count() == 3
    assert window.notes_model.rowCount() == 9  # maya's active notes
    assert "staff:test" in window.actor_label.text()  # staff were asked who they are


def test_wrong_passphrase_says_so_and_stays_locked(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    message = _try(qtbot, inspector, demo_path, "not it")
    assert "passphrase does not open this store" in message
    assert inspector.window.unlock_page.message.text() == message
    assert inspector.window.stack.currentWidget() is inspector.window.unlock_page
    assert inspector.window.unlock_page.passphrase.text() == ""


def test_damaged_store_is_a_different_message(
    qtbot: Any, inspector: Inspector, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.engram"
    broken.write_bytes(b"garbage" * 1000)
    assert "is not an Engram store (not a SQLite database)" in _try(qtbot, inspector, broken, "x")


def test_no_keyring_backend_explains_the_passphrase_path(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    keyring.set_keyring(NoKeyring())
    message = _try(qtbot, inspector, demo_path, "")
    assert "no usable OS keyring" in message and "passphrase" in message


def test_remember_on_this_computer_puts_the_key_in_the_keyring(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    inspector.window.unlock_page.remember.setChecked(True)
    unlock(qtbot, inspector, demo_path)
    inspector.controller.lock()
    Store.open(str(demo_path)).close()  # no passphrase needed any more


def test_idle_lock_fires_with_a_fake_clock_and_drops_everything(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    inspector.clock[0] += 4 * 60
    qtbot.wait(60)
    assert inspector.controller.store is not None  # not yet
    with qtbot.waitSignal(inspector.controller.locked, timeout=SIGNAL_TIMEOUT):
        inspector.clock[0] += 61
    window = inspector.window
    assert inspector.controller.store is None and inspector.controller.session is None
    assert window.notes_model.rowCount() == 0 and window.people.count() == 0
    assert window.stack.currentWidget() is window.unlock_page
    assert "without activity" in window.unlock_page.message.text()
    unlock(qtbot, inspector, demo_path)  # and the key is needed again
    wait_idle(qtbot, inspector)


def test_results_arriving_after_a_lock_are_dropped(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    inspector.controller.audience.preview("subject_alone")
    inspector.controller.tasks.wait()  # the preview is done, its result still queued
    inspector.controller.lock("Locked.")
    qtbot.wait(200)
    assert inspector.window.audience.block.toPlainText() == ""
    assert inspector.window.people.count() == 0
    assert inspector.controller.session is None


def test_issue15_item8_a_hostile_store_is_refused_before_the_key_is_derived(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    set_kdf_limits(demo_path, KdfParams(1, 64 << 30))  # 64 GiB: the opener would run out
    message = _try(qtbot, inspector, demo_path, PASSPHRASE)
    assert "not opened and nothing was derived" in message
    assert inspector.window.stack.currentWidget() is inspector.window.unlock_page


def test_issue15_item5_a_full_disk_says_so_and_never_calls_the_store_damaged(
    qtbot: Any, inspector: Inspector, demo_path: Path, small_disk: Path
) -> None:
    target = small_disk / demo_path.name
    for file in demo_path.parent.glob(demo_path.name + "*"):
        shutil.copy(file, small_disk / file.name)
    filler = fill(small_disk, room=0)
    message = _try(qtbot, inspector, target, PASSPHRASE)
    assert "is full" in message and "damaged" not in message and "restore" not in message
    filler.unlink()
    unlock(qtbot, inspector, target)  # the store was never harmed
