"""Issue 17 item 5, "Lock reaches every dialog": a dialog opened from another dialog (the
erasure report's Save…) goes through the same prompt host, so Ctrl+L, Ctrl+Q and the idle
lock close both, and the action whose dialog was open does nothing. Real window, real
dialogs, answered by `Modals` as they open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QWidget

from engram.gui.dialogs import ReportDialog, TypedConfirmDialog
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, Modals, unlock, wait_idle

CTRL = Qt.KeyboardModifier.ControlModifier


def _open_dialogs() -> list[QWidget]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QDialog) and w.isVisible()]


@pytest.mark.parametrize("route", ["ctrl+l", "ctrl+q", "idle"])
def test_issue17_item5_lock_closes_the_save_dialog_opened_from_the_erasure_report(
    qtbot: Any,
    real_inspector: Inspector,
    demo_path: Path,
    modals: Modals,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    route: str,
) -> None:
    """Erase maya, open the report's Save…, name a file, then lock from inside the save
    dialog: both dialogs close, no report is written, the window shows the unlock page."""
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    inspector = real_inspector
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    shown: list[str] = []
    reachable: list[bool] = []  # Lock and Quit answer from inside the save dialog
    target = home / "Documents" / "chosen-before-the-lock.txt"

    def confirm(dialog: QWidget) -> None:
        assert isinstance(dialog, TypedConfirmDialog)
        dialog.field.setText("maya")
        dialog.action.click()

    def open_save(dialog: QWidget) -> None:
        assert isinstance(dialog, ReportDialog)
        shown.append("report")
        modals.expect(lock_inside_save)
        QTimer.singleShot(0, dialog.save.click)  # the save dialog opens above the report

    def lock_inside_save(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        shown.append("save")
        actions = dialog.actions()
        reachable.append(window.lock_action in actions and window.quit_action in actions)
        dialog.selectFile(str(target))  # a file was chosen, not yet saved
        if route == "ctrl+l":
            qtbot.keyClick(dialog, Qt.Key.Key_L, CTRL)
        elif route == "ctrl+q":
            qtbot.keyClick(dialog, Qt.Key.Key_Q, CTRL)
        else:
            inspector.clock[0] += 10 * 60  # the idle check runs inside the dialog's loop

    modals.expect(confirm)
    modals.expect(open_save)
    with qtbot.waitSignal(inspector.controller.locked, timeout=SIGNAL_TIMEOUT):
        window.erase_action.trigger()
    wait_idle(qtbot, inspector)
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=SIGNAL_TIMEOUT)
    qtbot.wait(50)
    assert shown == ["report", "save"]
    assert reachable == [True]
    assert modals.unexpected == []
    assert _open_dialogs() == []
    assert not target.exists()
    assert list(home.rglob("*.txt")) == []
    assert window.stack.currentWidget() is window.unlock_page
    assert inspector.controller.store is None and inspector.controller.session is None
    if route != "ctrl+q":  # the window is in front again, the passphrase field ready
        qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=SIGNAL_TIMEOUT)
        assert QApplication.focusWidget() is window.unlock_page.passphrase


def test_issue17_item5_a_report_that_cannot_be_saved_says_so_in_one_sentence(
    qtbot: Any, tmp_path: Path
) -> None:
    """Save… asks the host where, and a failed write is said through the host's error box
    (one sentence naming the place), never a traceback on stderr."""
    asked: list[str] = []
    said: list[str] = []
    missing = tmp_path / "no-such-folder" / "report.txt"

    def ask_path(suggested: str) -> str:
        asked.append(suggested)
        return str(missing)

    dialog = ReportDialog(
        "maya was erased", "Keys destroyed: 2", ask_path=ask_path, fail=said.append
    )
    qtbot.addWidget(dialog)
    dialog.save.click()
    assert asked == ["maya-was-erased.txt"]
    assert len(said) == 1 and said[0].startswith(f"The report was not saved to {missing} (")
    assert "Traceback" not in said[0] and dialog.saved is None
