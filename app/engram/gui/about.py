"""The About text (version, store, licences) and the application icon."""

from __future__ import annotations

import html
from importlib import metadata

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import qVersion
from PySide6.QtGui import QIcon, QPixmap

from engram import __version__
from engram.gui import resources


def app_icon() -> QIcon:
    """The application icon, every size it ships in (empty if the files are missing)."""
    icon = QIcon()
    for path in resources.find().icon_files():
        icon.addFile(str(path))
    return icon


# What the inspector is built on, and under which licence each is used.
LICENCES = (
    ("Engram", "engram-inspector", "Apache License 2.0"),
    ("Qt for Python (PySide6)", "PySide6", "LGPL 3.0"),
    ("SQLAlchemy", "SQLAlchemy", "MIT License"),
    ("PyNaCl", "PyNaCl", "Apache License 2.0"),
    ("cryptography", "cryptography", "Apache License 2.0 or BSD"),
    ("PyStemmer (Snowball)", "PyStemmer", "MIT and BSD licences"),
)


def _version(distribution: str) -> str:
    if distribution == "PySide6":
        return str(pyside_version)  # installed as PySide6-Essentials or the like
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return ""


def about_text(store_path: str | None = None) -> str:
    """What the About box says: the version, the open store, and the licences."""
    store = html.escape(store_path) if store_path else "none open (locked)"
    licences = "".join(
        f"<li>{name} {_version(dist)} — {licence}</li>"
        for name, dist, licence in LICENCES
        if _version(dist) or dist == "engram-inspector"
    )
    return (
        f"<h3>Engram Inspector {__version__}</h3>"
        "<p>See, correct and erase what an AI agent remembers about a person — offline, "
        "on your own machine.</p>"
        "<p>Every change is a signed journal entry; <i>Verify integrity</i> proves nothing "
        "was altered behind Engram's back.</p>"
        f"<p><b>Store:</b> {store}</p>"
        f"<p><b>Licences</b></p><ul>{licences}</ul>"
        f"<p><small>Qt {qVersion()}, PySide6 {pyside_version}.</small></p>"
    )


def about_icon() -> QPixmap:
    """The picture beside the About text."""
    return app_icon().pixmap(96, 96)
