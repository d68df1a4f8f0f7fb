"""Issue 21 item 1, the window's half: File › Back up… and File › Restore from backup… go
through control/backup.py (as `engram backup` and `engram restore` do), run in the jobs
lane, ask through the one prompt host (so a lock closes their dialogs) and say what they
did in plain words."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMessageBox, QWidget

from engram.gui.tasks import Task
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE
from tests.gui.conftest import (
    SIGNAL_TIMEOUT,
    Inspector,
    Modals,
    note_texts,
    select_note,
    unlock,
    wait_idle,
)

CTRL = Qt.KeyboardModifier.ControlModifier
NOTE = "Owes Sam the garden budget draft."
COMMAND_LINE_WORDS = ("--", "engram backup", "engram restore", "reanchor")


def _jobs(inspector: Inspector) -> list[str]:
    titles: list[str] = []

    def started(task: Task) -> None:
        titles.append(task.title or "")

    inspector.controller.tasks.job_started.connect(started)
    return titles


def _back_up(qtbot: Any, inspector: Inspector, target: Path) -> None:
    inspector.prompts.path = str(target)
    with qtbot.waitSignal(inspector.controller.backup.backed_up, timeout=SIGNAL_TIMEOUT):
        inspector.window.backup_action.trigger()
    wait_idle(qtbot, inspector)


def _verified(path: Path) -> Any:
    store = Store.open(str(path), passphrase=PASSPHRASE)
    try:
        return verify(store)
    finally:
        store.close()


def test_issue21_item1_back_up_writes_an_owner_only_snapshot_with_its_checkpoint(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    jobs = _jobs(inspector)
    target = tmp_path / "kept" / "demo-backup.engram"
    target.parent.mkdir()
    _back_up(qtbot, inspector, target)

    kind, (suggested, _caption) = inspector.prompts.asked[-1]
    assert kind == "save_path" and suggested.startswith("demo-backup-")
    assert suggested.endswith(".engram")
    assert jobs == ["Backing up the store"]  # the jobs lane, shown in the strip
    checkpoint = target.with_name(target.name + ".checkpoint")
    for made in (target, checkpoint):
        assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert _verified(target).ok  # a whole store, its checkpoint agreeing with it
    title, text = inspector.prompts.informed[-1]
    assert title == "Backup saved" and str(target) in text
    assert "same passphrase" in text and "only your user account" in text
    assert not any(word in text for word in COMMAND_LINE_WORDS)
    assert inspector.prompts.errors == []
    assert inspector.controller.store is not None  # the store stayed open and in use


def test_issue21_item1_back_up_is_off_while_locked(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    assert not inspector.window.backup_action.isEnabled()
    unlock(qtbot, inspector, demo_path)
    assert inspector.window.backup_action.isEnabled()
    inspector.controller.lock()
    assert not inspector.window.backup_action.isEnabled()
    assert inspector.window.restore_action.isEnabled()  # a backup is restored without one


def test_issue21_item1_restore_over_the_open_store_locks_then_puts_the_backup_back(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    backup = tmp_path / "demo-backup.engram"
    _back_up(qtbot, inspector, backup)
    # A change after the backup: restoring the backup takes the store back before it.
    select_note(qtbot, inspector, NOTE)
    inspector.prompts.reason = ""
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        inspector.window.delete_action.trigger()
    wait_idle(qtbot, inspector)
    assert NOTE not in note_texts(inspector)

    jobs = _jobs(inspector)
    prompts = inspector.prompts
    prompts.backup, prompts.restore_to = str(backup), str(demo_path)
    prompts.yes, prompts.backup_secret = True, PASSPHRASE
    with qtbot.waitSignal(inspector.controller.backup.restored, timeout=SIGNAL_TIMEOUT):
        inspector.window.restore_action.trigger()
    wait_idle(qtbot, inspector)

    asked = [kind for kind, _ in prompts.asked[-4:]]
    assert asked == ["backup_file", "restore_target", "question", "backup_passphrase"]
    question = prompts.asked[-2][1]
    assert "open in this window" in question and "The window locks first" in question
    assert jobs == ["Restoring a backup"]
    assert inspector.controller.store is None  # locked before the store was replaced
    assert inspector.window.stack.currentWidget() is inspector.window.unlock_page
    assert inspector.window.unlock_page.store.currentText() == str(demo_path)  # ready
    title, text = prompts.informed[-1]
    assert title == "Backup restored" and str(demo_path) in text and "re-anchored" in text
    assert not any(word in text for word in COMMAND_LINE_WORDS)
    assert prompts.errors == []
    assert _verified(demo_path).ok  # re-anchored: an older store, yet no rollback
    unlock(qtbot, inspector, demo_path)
    assert NOTE in note_texts(inspector)  # the deletion after the backup is gone


def test_issue21_item1_restore_to_a_new_file_and_a_wrong_passphrase(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    backup = tmp_path / "b.engram"
    _back_up(qtbot, inspector, backup)
    inspector.controller.lock()
    prompts = inspector.prompts
    target = tmp_path / "restored.engram"
    prompts.backup, prompts.restore_to = str(backup), str(target)

    prompts.backup_secret = "not the passphrase"
    with qtbot.waitSignal(inspector.controller.failed, timeout=SIGNAL_TIMEOUT):
        inspector.window.restore_action.trigger()
    wait_idle(qtbot, inspector)
    assert len(prompts.errors) == 1 and "\n" not in prompts.errors[0]
    assert not target.exists()  # checked before anything was placed
    assert "question" not in [kind for kind, _ in prompts.asked]  # no store there to replace

    prompts.backup_secret = PASSPHRASE
    with qtbot.waitSignal(inspector.controller.backup.restored, timeout=SIGNAL_TIMEOUT):
        inspector.window.restore_action.trigger()
    wait_idle(qtbot, inspector)
    assert _verified(target).ok
    assert str(target) in inspector.controller.store_lock.recent_stores()
    assert "put it in place as" in prompts.informed[-1][1]


def test_issue21_item1_restore_cancelled_at_the_replace_question_changes_nothing(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    backup = tmp_path / "b.engram"
    _back_up(qtbot, inspector, backup)
    before = demo_path.read_bytes()
    prompts = inspector.prompts
    prompts.backup, prompts.restore_to, prompts.yes = str(backup), str(demo_path), False
    inspector.window.restore_action.trigger()
    wait_idle(qtbot, inspector)
    assert prompts.asked[-1][0] == "question"  # never got as far as the passphrase
    assert inspector.controller.store is not None  # not locked: nothing was going to happen
    assert demo_path.read_bytes() == before
    assert "Cancelled: nothing was restored." in inspector.window.statusBar().currentMessage()


def _type_file_name(dialog: QFileDialog, name: str) -> None:
    field = dialog.findChild(QLineEdit, "fileNameEdit")
    assert field is not None
    field.setText(name)
    dialog.accept()


def test_issue21_item1_real_dialogs_back_up_and_ctrl_l_closes_the_restore_chooser(
    qtbot: Any,
    real_inspector: Inspector,
    demo_path: Path,
    modals: Modals,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    inspector = real_inspector
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    target = home / "Documents" / "by-hand.engram"
    said: list[str] = []

    def save(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        assert dialog.acceptMode() == QFileDialog.AcceptMode.AcceptSave
        assert dialog.directory().absolutePath() == str(home / "Documents")
        _type_file_name(dialog, target.name)

    def saved(box: QWidget) -> None:
        assert isinstance(box, QMessageBox)
        said.append(box.text())
        box.accept()

    modals.expect(save)
    modals.expect(saved)
    with qtbot.waitSignal(inspector.controller.backup.backed_up, timeout=SIGNAL_TIMEOUT):
        window.backup_action.trigger()
    qtbot.waitUntil(lambda: bool(said), timeout=SIGNAL_TIMEOUT)
    assert target.exists() and str(target) in said[0]

    chooser: list[bool] = []

    def lock_inside(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        assert dialog.fileMode() == QFileDialog.FileMode.ExistingFile
        chooser.append(window.lock_action in dialog.actions())
        dialog.selectFile(str(target))  # chosen, not yet accepted
        qtbot.keyClick(dialog, Qt.Key.Key_L, CTRL)

    modals.expect(lock_inside)
    with qtbot.waitSignal(inspector.controller.locked, timeout=SIGNAL_TIMEOUT):
        window.restore_action.trigger()
    wait_idle(qtbot, inspector)
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=SIGNAL_TIMEOUT)
    assert chooser == [True]
    assert modals.unexpected == []  # no further question: the restore did nothing
    assert inspector.controller.store is None
    assert not list(tmp_path.rglob("*-restored.engram"))
