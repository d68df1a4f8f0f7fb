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


def _with_version(heading: str) -> str:
    """A notices heading with the installed version, when the notices name none."""
    if " " in heading:
        return heading  # a build's notices name the exact version shipped
    try:
        return f"{heading} {metadata.version(heading)}"
    except metadata.PackageNotFoundError:
        return heading


def third_party_licences() -> str:
    """Every component Engram ships with (the third-party notices' index), as HTML."""
    try:
        listed = resources.third_party_index()
        where = str(resources.third_party_notices())
    except (OSError, resources.ResourcesMissing):
        return "<p>The third-party notices are missing from this installation.</p>"
    items = "; ".join(
        f"{html.escape(_with_version(heading))} ({html.escape(licence)})"
        for heading, licence in listed
    )
    return (
        f"<p><small>Built on: {items}.</small></p>"
        f"<p><small>Their licence texts: {html.escape(where)}</small></p>"
    )


def about_text(store_path: str | None = None) -> str:
    """What the About box says: the version, the open store, and the licences."""
    store = html.escape(store_path) if store_path else "none open (locked)"
    return (
        f"<h3>Engram Inspector {__version__}</h3>"
        "<p>See, correct and erase what an AI agent remembers about a person — offline, "
        "on your own machine.</p>"
        "<p>Every change is a signed journal entry; <i>Verify integrity</i> proves nothing "
        "was altered behind Engram's back.</p>"
        f"<p><b>Store:</b> {store}</p>"
        "<p><b>Licences</b></p>"
        f"<p>Engram {__version__} — Apache License 2.0. Qt {qVersion()} (in PySide6) — "
        "GNU LGPL 3.0.</p>"
        f"{third_party_licences()}"
        f"<p><small>Qt {qVersion()}, PySide6 {pyside_version}.</small></p>"
    )


def about_icon() -> QPixmap:
    """The picture beside the About text."""
    return app_icon().pixmap(96, 96)
