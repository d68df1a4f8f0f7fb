"""Issue 17 item 6 (keyboard use): in every menu of the window, each entry's Alt letter is
its own, so pressing it acts on the entry named, never on the first of two that share it."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QMenu

from engram.gui.main_window import MainWindow


def _letter(text: str) -> str | None:
    at = text.replace("&&", "").find("&")
    return text.replace("&&", "")[at + 1].lower() if at >= 0 else None


def test_issue17_item6_every_menu_entry_has_a_letter_of_its_own(qtbot: Any) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    menus = [a.menu() for a in window.menuBar().actions() if isinstance(a.menu(), QMenu)]
    assert menus
    for menu in menus:
        assert isinstance(menu, QMenu)
        entries = [a.text() for a in menu.actions() if not a.isSeparator()]
        letters = [_letter(text) for text in entries]
        assert None not in letters, f"{menu.title()}: an entry has no letter: {entries}"
        clashes = {x for x in letters if letters.count(x) > 1}
        assert not clashes, f"{menu.title()} shares {sorted(clashes)} among {entries}"
