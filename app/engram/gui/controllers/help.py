"""The Help menu: the user guide (shipped inside the package, opened by the desktop's own
viewer), About (version, the open store, licences) and the keyboard shortcuts, listed from
the window's own actions so the list cannot drift from what the keys do."""

from __future__ import annotations

from PySide6.QtCore import QObject, QUrl
from PySide6.QtGui import QDesktopServices

from engram.gui import resources
from engram.gui.about import about_icon, about_text
from engram.gui.controllers.hub import Hub
from engram.store.location import describe


class HelpController(QObject):
    """Opens the Help dialogs through the dialog host (a lock closes them)."""

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.hub = hub
        hub.w.about_action.triggered.connect(self.about)
        hub.w.shortcuts_action.triggered.connect(self.shortcuts)
        hub.w.user_guide_action.triggered.connect(self.user_guide)

    def user_guide_url(self) -> QUrl:
        """The file URL of the user guide inside the installed package."""
        return QUrl.fromLocalFile(str(resources.user_guide()))

    def user_guide(self) -> None:
        """Help > User guide: the packaged guide in the desktop's viewer for it."""
        try:
            url = self.user_guide_url()
        except resources.ResourcesMissing as error:
            self.hub.fail(str(error))
            return
        if not QDesktopServices.openUrl(url):
            self.hub.fail(f"No program here opens the user guide; it is at {url.toLocalFile()}.")

    def about(self) -> None:
        """Help > About: the version, the store that is open, the licences."""
        store = self.hub.store
        self.hub.prompts.show_about(
            about_text(describe(store.url) if store else None), about_icon()
        )

    def shortcuts(self) -> None:
        """Help > Keyboard shortcuts."""
        self.hub.prompts.show_shortcuts(self.hub.w.shortcut_rows())
