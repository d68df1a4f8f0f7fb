"""Light and dark, following the system; colours that mean something (scope, status)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from engram.gui import resources
from engram.model.notes import NoteStatus
from engram.model.scope import Scope


@dataclass(frozen=True)
class ThemeData:
    """Colours from engram/data/theme/palettes.json: scope badges and palette overrides."""

    scope_badges: dict[str, dict[Scope, str]]  # "light"/"dark" -> scope -> colour
    badge_text: dict[str, str]
    palettes: dict[str, dict[str, dict[str, str]]]  # name -> "active"/"disabled" -> role


@cache
def theme_data() -> ThemeData:
    """The colour data, read once; a missing or malformed file is an error worth a message."""
    path = resources.find().palettes
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return ThemeData(
            scope_badges={
                mode: {scope: str(colours[scope.value]) for scope in Scope}
                for mode, colours in raw["scope_badges"].items()
            },
            badge_text={mode: str(colour) for mode, colour in raw["badge_text"].items()},
            palettes=raw["palettes"],
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise resources.ResourcesMissing(
            f"{path} is damaged ({error}); reinstall Engram."
        ) from None


def _mode(dark: bool | None) -> str:
    return "dark" if (is_dark() if dark is None else dark) else "light"


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
    return QColor(theme_data().scope_badges[_mode(dark)][scope])


def badge_text_color(scope: Scope, dark: bool | None = None) -> QColor:
    """Text on a scope badge: dark on light badges (dark mode), white otherwise."""
    return QColor(theme_data().badge_text[_mode(dark)])


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
    dark = wanted == "dark" or (wanted != "light" and system_dark)
    app.setPalette(dark_palette() if dark else light_palette(app))


def _apply(palette: QPalette, name: str) -> QPalette:
    groups = theme_data().palettes.get(name, {})
    for group, where in (("active", None), ("disabled", QPalette.ColorGroup.Disabled)):
        for role, value in groups.get(group, {}).items():
            colour_role = QPalette.ColorRole[role]
            if where is None:
                palette.setColor(colour_role, QColor(value))
            else:
                palette.setColor(where, colour_role, QColor(value))
    return palette


def light_palette(app: QApplication) -> QPalette:
    """Fusion's own palette with the light overrides from the colour data."""
    return _apply(app.style().standardPalette(), "light")


def dark_palette() -> QPalette:
    """A calm dark palette with enough contrast for small text (the colour data's "dark")."""
    return _apply(QPalette(), "dark")
