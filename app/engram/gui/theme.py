"""Light and dark, following the system; colours that mean something (scope, status)."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from engram.model.notes import NoteStatus
from engram.model.scope import Scope

_SCOPE_LIGHT = {
    Scope.DIRECT: "#b03a2e",
    Scope.UNSPECIFIED: "#9a6700",
    Scope.PORTABLE: "#1d7a46",
}
_SCOPE_DARK = {
    Scope.DIRECT: "#ff8a80",
    Scope.UNSPECIFIED: "#ffd166",
    Scope.PORTABLE: "#7be0a4",
}
SCOPE_MEANING = {
    Scope.DIRECT: "private: only when the person alone reads",
    Scope.UNSPECIFIED: "private until the person says otherwise",
    Scope.PORTABLE: "may reach any audience",
}


def is_dark() -> bool:
    """Whether the current palette is dark."""
    palette = QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def scope_color(scope: Scope, dark: bool | None = None) -> QColor:
    """The badge colour of a scope, readable on the current (or given) palette."""
    return QColor((_SCOPE_DARK if (is_dark() if dark is None else dark) else _SCOPE_LIGHT)[scope])


def badge_text_color(scope: Scope, dark: bool | None = None) -> QColor:
    """Text on a scope badge: dark on light badges (dark mode), white otherwise."""
    return QColor("#1b1b1b") if (is_dark() if dark is None else dark) else QColor("#ffffff")


def closed_color() -> QColor:
    """Closed intervals are drawn and written in a quieter colour."""
    return QGuiApplication.palette().color(QPalette.ColorRole.PlaceholderText)


def status_is_closed(status: NoteStatus) -> bool:
    """Everything but active is a closed interval."""
    return status is not NoteStatus.ACTIVE


def apply_theme(app: QApplication) -> None:
    """Fusion everywhere; dark when the system (or ENGRAM_THEME=dark) asks for it."""
    app.setStyle("Fusion")
    wanted = os.environ.get("ENGRAM_THEME", "").lower()
    system_dark = app.styleHints().colorScheme() == Qt.ColorScheme.Dark
    if wanted == "dark" or (wanted != "light" and system_dark):
        app.setPalette(dark_palette())
    else:
        app.setPalette(app.style().standardPalette())


def dark_palette() -> QPalette:
    """A calm dark palette with enough contrast for small text."""
    palette = QPalette()
    colors = {
        QPalette.ColorRole.Window: "#202124",
        QPalette.ColorRole.WindowText: "#e8eaed",
        QPalette.ColorRole.Base: "#17181a",
        QPalette.ColorRole.AlternateBase: "#24262a",
        QPalette.ColorRole.ToolTipBase: "#303134",
        QPalette.ColorRole.ToolTipText: "#e8eaed",
        QPalette.ColorRole.Text: "#e8eaed",
        QPalette.ColorRole.Button: "#2d2f33",
        QPalette.ColorRole.ButtonText: "#e8eaed",
        QPalette.ColorRole.BrightText: "#ffffff",
        QPalette.ColorRole.Highlight: "#4c8bf5",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#8ab4f8",
        QPalette.ColorRole.PlaceholderText: "#9aa0a6",
    }
    for role, value in colors.items():
        palette.setColor(role, QColor(value))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#80868b"))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#80868b"))
    return palette
