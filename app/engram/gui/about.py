"""The About box and the application icon."""

from __future__ import annotations

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import qVersion
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QMessageBox, QWidget

from engram import __version__
from engram.gui import resources


def app_icon() -> QIcon:
    """The application icon, every size it ships in (empty if the files are missing)."""
    icon = QIcon()
    for path in resources.find().icon_files():
        icon.addFile(str(path))
    return icon


def about_text() -> str:
    """What the About box says."""
    return (
        f"<h3>Engram Inspector {__version__}</h3>"
        "<p>See, correct and erase what an AI agent remembers about a person — offline, "
        "on your own machine.</p>"
        "<p>Every change is a signed journal entry; <i>Verify integrity</i> proves nothing "
        "was altered behind Engram's back.</p>"
        f"<p><small>Qt {qVersion()}, PySide6 {pyside_version}. Licensed under the Apache "
        "License 2.0.</small></p>"
    )


def show_about(parent: QWidget) -> QMessageBox:
    """Open the About box (modeless, so tests and the idle lock can close it)."""
    box = QMessageBox(parent)
    box.setWindowTitle("About Engram")
    box.setText(about_text())
    box.setIconPixmap(app_icon().pixmap(96, 96))
    box.setStandardButtons(QMessageBox.StandardButton.Close)
    box.open()
    return box
