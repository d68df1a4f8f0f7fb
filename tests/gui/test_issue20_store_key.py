"""Issue 20 item 7 in the window: File › Change passphrase… and File › Forget the key on
this computer…, through the window's one prompt host (a lock closes their dialogs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from engram.gui.new_store_dialog import ChangePassphraseDialog, ForgetKeyDialog
from engram.model.errors import WrongPassphrase
from engram.store.store import Store
from tests.conftest import PASSPHRASE, MemoryKeyring
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, Modals, _left, unlock, wait_idle

NEW = "quiet lantern orbit mosaic"
CTRL = Qt.KeyboardModifier.ControlModifier


def _file_menu_texts(inspector: Inspector) -> list[str]:
    menu = inspector.window.menuBar().actions()[0].menu()
    return [a.text().replace("&", "") for a in menu.actions()]


def test_issue20_item7_change_passphrase_from_the_file_menu(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    assert "Change passphrase…" in _file_menu_texts(inspector)
    assert "Forget the key on this computer…" in _file_menu_texts(inspector)
    assert not window.change_passphrase_action.isEnabled()  # locked: nothing to change
    unlock(qtbot, inspector, demo_path)
    assert window.change_passphrase_action.isEnabled()
    inspector.prompts.new_passphrase_answer = NEW
    with qtbot.waitSignal(inspector.controller.store_key.done, timeout=SIGNAL_TIMEOUT):
        window.change_passphrase_action.trigger()
    assert inspector.prompts.asked[-1] == ("new_passphrase", (str(demo_path), True))
    title, said = inspector.prompts.informed[-1]
    assert title == "Passphrase changed" and "old one no longer opens it" in said
    inspector.controller.lock()
    with pytest.raises(WrongPassphrase):
        Store.open(str(demo_path), passphrase=PASSPHRASE)
    reopened = Store.open(str(demo_path), passphrase=NEW)
    try:
        assert reopened.info.id
    finally:
        reopened.close()


def test_issue20_item7_the_real_dialog_keeps_the_floor_and_a_lock_closes_it(
    qtbot: Any, real_inspector: Inspector, demo_path: Path, modals: Modals
) -> None:
    inspector, window = real_inspector, real_inspector.window
    unlock(qtbot, inspector, demo_path)
    seen: dict[str, Any] = {}

    def weak_then_lock(dialog: QWidget) -> None:
        assert isinstance(dialog, ChangePassphraseDialog)
        qtbot.keyClicks(dialog.passphrase, "password1")
        qtbot.keyClicks(dialog.again, "password1")
        seen["weak"] = (dialog.ok.isEnabled(), dialog.problem.text())
        dialog.passphrase.clear()
        dialog.again.clear()
        qtbot.keyClicks(dialog.passphrase, NEW)
        qtbot.keyClicks(dialog.again, NEW)
        seen["strong"] = dialog.ok.isEnabled()
        qtbot.keyClick(dialog, Qt.Key.Key_L, CTRL)  # lock from inside the dialog

    modals.expect(weak_then_lock)
    with qtbot.waitSignal(inspector.controller.locked, timeout=SIGNAL_TIMEOUT):
        window.change_passphrase_action.trigger()
    wait_idle(qtbot, inspector)
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=SIGNAL_TIMEOUT)
    assert modals.unexpected == []
    assert seen["weak"][0] is False and "too easy to guess" in seen["weak"][1]
    assert seen["strong"] is True
    Store.open(str(demo_path), passphrase=PASSPHRASE).close()  # the lock cancelled it

    unlock(qtbot, inspector, demo_path)

    def strong(dialog: QWidget) -> None:
        assert isinstance(dialog, ChangePassphraseDialog)
        qtbot.keyClicks(dialog.passphrase, NEW)
        qtbot.keyClicks(dialog.again, NEW)
        qtbot.mouseClick(dialog.ok, _left())

    def told(box: QWidget) -> None:
        seen["told"] = box.windowTitle()
        box.close()

    modals.expect(strong)
    modals.expect(told)
    with qtbot.waitSignal(inspector.controller.store_key.done, timeout=SIGNAL_TIMEOUT):
        window.change_passphrase_action.trigger()
    qtbot.waitUntil(lambda: "told" in seen, timeout=SIGNAL_TIMEOUT)
    assert modals.unexpected == []
    inspector.controller.lock()
    Store.open(str(demo_path), passphrase=NEW).close()


def test_issue20_item7_forget_the_key_asks_the_passphrase_first(
    qtbot: Any, inspector: Inspector, demo_path: Path, test_keyring: MemoryKeyring
) -> None:
    window, prompts = inspector.window, inspector.prompts
    with qtbot.waitSignal(inspector.controller.unlocked, timeout=SIGNAL_TIMEOUT):
        inspector.controller.unlock(str(demo_path), PASSPHRASE, True)  # remembered here
    wait_idle(qtbot, inspector)
    store = inspector.controller.store
    assert store is not None
    key = ("engram", store.info.id)
    assert key in test_keyring.items
    assert window.forget_key_action.isEnabled()
    prompts.forget_answer = "not the passphrase"
    with qtbot.waitSignal(inspector.controller.failed, timeout=SIGNAL_TIMEOUT):
        window.forget_key_action.trigger()
    assert key in test_keyring.items  # a wrong passphrase forgets nothing
    assert "does not open" in prompts.errors[-1]
    prompts.forget_answer = PASSPHRASE
    with qtbot.waitSignal(inspector.controller.store_key.done, timeout=SIGNAL_TIMEOUT):
        window.forget_key_action.trigger()
    assert key not in test_keyring.items
    assert prompts.informed[-1][0] == "Key forgotten"
    inspector.controller.lock()
    page = window.unlock_page
    page.set_recent([], str(demo_path))
    with qtbot.waitSignal(inspector.controller.failed, timeout=SIGNAL_TIMEOUT):
        inspector.controller.unlock(str(demo_path), "", False)  # the keyring no longer opens it


def test_issue20_item7_a_keyring_only_store_offers_set_not_forget(
    qtbot: Any, real_inspector: Inspector, tmp_path: Path, modals: Modals
) -> None:
    path = tmp_path / "keyring-only.engram"
    Store.create(str(path)).close()
    inspector, window = real_inspector, real_inspector.window
    with qtbot.waitSignal(inspector.controller.unlocked, timeout=SIGNAL_TIMEOUT):
        inspector.controller.unlock(str(path), "", False)
    wait_idle(qtbot, inspector)
    assert not window.forget_key_action.isEnabled()
    assert "no passphrase" in window.forget_key_action.toolTip()
    assert window.change_passphrase_action.text().replace("&", "") == "Set a passphrase…"

    def set_one(dialog: QWidget) -> None:
        assert isinstance(dialog, ChangePassphraseDialog)
        assert dialog.windowTitle() == "Set a passphrase"
        qtbot.keyClicks(dialog.passphrase, NEW)
        qtbot.keyClicks(dialog.again, NEW)
        qtbot.mouseClick(dialog.ok, _left())

    modals.expect(set_one)
    modals.expect(lambda box: box.close())
    with qtbot.waitSignal(inspector.controller.store_key.done, timeout=SIGNAL_TIMEOUT):
        window.change_passphrase_action.trigger()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=SIGNAL_TIMEOUT)
    assert window.forget_key_action.isEnabled()  # now a passphrase would still open it

    def forget(dialog: QWidget) -> None:
        assert isinstance(dialog, ForgetKeyDialog)
        assert not dialog.ok.isEnabled()
        qtbot.keyClicks(dialog.passphrase, NEW)
        qtbot.mouseClick(dialog.ok, _left())

    modals.expect(forget)
    modals.expect(lambda box: box.close())
    with qtbot.waitSignal(inspector.controller.store_key.done, timeout=SIGNAL_TIMEOUT):
        window.forget_key_action.trigger()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=SIGNAL_TIMEOUT)
    assert modals.unexpected == []
    inspector.controller.lock()
    Store.open(str(path), passphrase=NEW).close()
