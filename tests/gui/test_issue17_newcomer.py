"""Issue 17, "A newcomer's first minute": the welcome appears when the store `engram desk`
names is not there (item 10), and the passphrase never lands in clear (item 11). Real
widgets, offscreen; keys pressed back to back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from engram.store.location import default_store_path, stores_folder
from tests.conftest import PASSPHRASE
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, wait_idle


def _demo_action(inspector: Inspector) -> Any:
    """File › Open the demo, found in the menu bar the way a person finds it."""
    file_menu = inspector.window.menuBar().actions()[0].menu()
    return next(a for a in file_menu.actions() if a.text().replace("&", "") == "Open the demo")


def test_issue17_item10_desk_with_the_default_path_and_no_store_shows_the_welcome(
    qtbot: Any, inspector: Inspector
) -> None:
    """`engram desk` (and the desktop entry) always pass the default store path; with no
    store there and none recent, the welcome shows, not an unlock form for a missing file."""
    page = inspector.window.unlock_page
    assert not default_store_path().exists()
    inspector.controller.store_lock.launch(str(default_store_path()), None)
    assert page.first_run and page.welcome_demo.isVisible()
    assert not page.form.isVisible()
    assert page.message.text() == ""


def test_issue17_item10_open_the_demo_is_in_the_file_menu_everywhere(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    """The unlock error says "open the demo": File › Open the demo does, on the unlock page
    and with another store open (which it replaces)."""
    page = inspector.window.unlock_page
    inspector.controller.store_lock.launch(str(demo_path), PASSPHRASE)  # a store, open
    qtbot.waitUntil(lambda: inspector.controller.store is not None, timeout=SIGNAL_TIMEOUT)
    wait_idle(qtbot, inspector)
    inspector.controller.lock()
    page.set_recent([], str(demo_path.with_name("gone.engram")))
    qtbot.keyClicks(page.passphrase, "whatever")
    with qtbot.waitSignal(inspector.controller.failed, timeout=SIGNAL_TIMEOUT) as got:
        qtbot.keyClick(page.passphrase, Qt.Key.Key_Return)
    assert "open the demo" in str(got.args[0])
    action = _demo_action(inspector)
    assert action.isEnabled()
    inspector.prompts.yes = True  # create the data folder
    with qtbot.waitSignal(inspector.controller.person_opened, timeout=60_000):
        action.trigger()
    wait_idle(qtbot, inspector)
    demo = stores_folder() / "demo.engram"
    assert inspector.window.store_label.text() == str(demo)
    inspector.controller.unlock(str(demo_path), PASSPHRASE, False)  # another store open…
    qtbot.waitUntil(
        lambda: inspector.window.store_label.text() == str(demo_path), timeout=SIGNAL_TIMEOUT
    )
    wait_idle(qtbot, inspector)
    assert _demo_action(inspector).isEnabled()
    with qtbot.waitSignal(inspector.controller.unlocked, timeout=SIGNAL_TIMEOUT):
        _demo_action(inspector).trigger()  # …and the demo replaces it
    wait_idle(qtbot, inspector)
    assert inspector.window.store_label.text() == str(demo)


def test_issue17_item11_at_launch_the_passphrase_typed_goes_to_the_passphrase_field(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    """With a store path filled in at launch, the keys typed next are the passphrase's, and
    Return unlocks; the path field never holds them."""
    page = inspector.window.unlock_page
    inspector.controller.store_lock.launch(str(demo_path), None)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is page.passphrase, timeout=2000)
    focused = QApplication.focusWidget()
    assert focused is not None
    qtbot.keyClicks(focused, PASSPHRASE)
    with qtbot.waitSignal(inspector.controller.unlocked, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(focused, Qt.Key.Key_Return)
    wait_idle(qtbot, inspector)
    assert PASSPHRASE not in page.store.currentText()


def test_issue17_item11_choosing_a_store_then_return_in_the_path_moves_to_the_passphrase(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    page = inspector.window.unlock_page
    inspector.prompts.path = str(demo_path)
    page.welcome_open.click()  # Open a store…: chosen, so the passphrase comes next
    assert QApplication.focusWidget() is page.passphrase
    page.store.setFocus()
    other = str(tmp_path / "other.engram")
    page.store.setEditText("")
    qtbot.keyClicks(page.store, other)
    qtbot.keyClick(page.store, Qt.Key.Key_Return)
    assert QApplication.focusWidget() is page.passphrase
    assert page.store.currentText() == other


def test_issue17_item11_no_message_echoes_what_was_typed_as_the_passphrase(
    qtbot: Any, inspector: Inspector, tmp_path: Path
) -> None:
    """Typed into the Store field while focus was wrong, then again into the passphrase
    field: the error about the missing "store" must not spell the passphrase out."""
    page = inspector.window.unlock_page
    secret = "tulip-harbour-9"
    page.set_recent([], str(tmp_path / "x.engram"))
    page.store.setFocus()
    page.store.setEditText("")
    qtbot.keyClicks(page.store, secret)
    qtbot.keyClick(page.store, Qt.Key.Key_Return)
    qtbot.keyClicks(page.passphrase, secret)
    with qtbot.waitSignal(inspector.controller.failed, timeout=SIGNAL_TIMEOUT) as got:
        qtbot.keyClick(page.passphrase, Qt.Key.Key_Return)
    for said in (
        str(got.args[0]),
        page.message.text(),
        inspector.window.statusBar().currentMessage(),
    ):
        assert secret not in said
    assert "would repeat the passphrase" in page.message.text()
