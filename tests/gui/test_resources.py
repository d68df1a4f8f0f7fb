"""Issue 12 item 1: the inspector takes its icon and colours from its resources, which are
package data since issue 20 item 5 (engram/data)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtGui import QImage, QPalette
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from engram.gui import resources, theme
from engram.gui.app import build
from engram.model.scope import Scope

SOURCE = Path(__file__).resolve().parents[2] / "app" / "engram" / "data"


def test_issue12_item1_every_icon_size_is_there_at_its_size() -> None:
    found = resources.find()
    assert found.palettes.is_relative_to(SOURCE)  # the package's own data, in a checkout too
    files = found.icon_files()
    assert [QImage(str(f)).width() for f in files] == list(resources.ICON_SIZES)
    assert all(QImage(str(f)).height() == QImage(str(f)).width() for f in files)


def test_issue12_item1_window_dialogs_and_about_box_carry_the_icon(
    qtbot: QtBot, tmp_path: Path
) -> None:
    # build() uses the default settings: keep them out of the user's configuration.
    QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, str(tmp_path))
    app, window, controller = build()
    qtbot.addWidget(window)
    icon = app.windowIcon()
    assert not icon.isNull()
    assert {s.width() for s in icon.availableSizes()} >= {16, 32, 256, 512}
    assert app.desktopFileName() == resources.APP_ID
    # Dialogs are top-level windows: without an icon of their own they show the application's.
    assert window.windowIcon().cacheKey() == icon.cacheKey()
    seen: list[tuple[bool, str]] = []

    def read_about() -> None:  # About is modal now (through the dialog host, issue 8)
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, read_about)
            return
        seen.append((box.iconPixmap().isNull(), box.text()))
        box.reject()

    QTimer.singleShot(0, read_about)
    window.about_action.trigger()
    assert seen, "About did not open"
    null_icon, text = seen[0]
    assert not null_icon and "Engram Inspector" in text
    controller.lock("test over")


@pytest.fixture
def edited_palettes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, object]]:
    """A copy of the resources whose colours a test may change, found instead of the real one."""
    copy = tmp_path / "resources"
    shutil.copytree(SOURCE, copy)
    data: dict[str, object] = json.loads((copy / "theme" / "palettes.json").read_text())
    found = resources.Resources(copy / "theme" / "palettes.json", copy / "icons")
    monkeypatch.setattr(resources, "find", lambda: found)
    theme.theme_data.cache_clear()
    yield data
    theme.theme_data.cache_clear()


def _write(data: dict[str, object]) -> None:
    path = resources.find().palettes
    path.write_text(json.dumps(data))
    theme.theme_data.cache_clear()


def test_issue12_item1_scope_badges_and_dark_palette_come_from_the_data(
    edited_palettes: dict[str, object], qtbot: QtBot
) -> None:
    badges = edited_palettes["scope_badges"]
    assert isinstance(badges, dict)
    assert theme.scope_color(Scope.DIRECT, dark=False).name() == badges["light"]["direct"]
    badges["light"]["direct"] = "#123456"
    badges["dark"]["portable"] = "#abcdef"
    palettes = edited_palettes["palettes"]
    assert isinstance(palettes, dict)
    palettes["dark"]["active"]["Window"] = "#010203"
    _write(edited_palettes)
    assert theme.scope_color(Scope.DIRECT, dark=False).name() == "#123456"
    assert theme.scope_color(Scope.PORTABLE, dark=True).name() == "#abcdef"
    assert theme.dark_palette().color(QPalette.ColorRole.Window).name() == "#010203"


def test_issue12_item1_damaged_colour_data_is_one_sentence(
    edited_palettes: dict[str, object],
) -> None:
    del edited_palettes["badge_text"]
    _write(edited_palettes)
    with pytest.raises(resources.ResourcesMissing, match=r"is damaged .* reinstall Engram"):
        theme.theme_data()
