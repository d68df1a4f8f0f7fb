"""Render the application icon's PNGs from its SVG source.

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/render_icons.py

writes resources/icons/hicolor/NxN/apps/APP_ID.png for every size Engram ships: the
freedesktop icon-theme layout, so the tree installs as it is and the desktop entry finds the
icon by the application id. The window loads the same files. Qt's own SVG renderer draws
them, so no other tool is needed. Run it again after changing engram.svg, and commit both.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

APP_ID = "io.github.engram_inspector.Engram"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"


def render(source: Path, size: int, target: Path) -> None:
    """Draw `source` into a transparent size×size PNG at `target`."""
    renderer = QSvgRenderer(str(source))
    if not renderer.isValid():
        raise SystemExit(f"{source} is not a valid SVG file.")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    target.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(target), "PNG"):
        raise SystemExit(f"Could not write {target}.")


def main() -> int:
    """Render every size."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    source = ICONS / "engram.svg"
    for size in SIZES:
        render(source, size, ICONS / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png")
    del app
    print(f"Rendered {len(SIZES)} PNGs under {ICONS / 'hicolor'}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
