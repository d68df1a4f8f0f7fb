"""The shape every panel controller shares: it hears the hub, clears on a lock, and
refreshes after a change — at once when its tab is in view, otherwise when it is shown."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from engram.gui.controllers.hub import Hub


class PanelController(QObject):
    """Subclasses fill in `clear` and `refresh`; `tab` is None for what is always in view."""

    tab: QWidget | None = None
    shows_records = False  # True for a panel that shows the audit log (hears `recorded`)

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.hub = hub
        self.w = hub.w
        self.stale = False
        hub.session_changed.connect(self._session_changed)
        hub.changed.connect(self._store_changed)
        if self.shows_records:
            hub.recorded.connect(self._store_changed)
        hub.reload_requested.connect(lambda: self._store_changed(""))
        self.w.tabs.currentChanged.connect(lambda _i: self.refresh_if_shown())

    def clear(self) -> None:
        """Forget everything shown (a lock, another person)."""

    def refresh(self) -> None:
        """Load what the panel shows, off the UI thread."""

    def shown(self) -> bool:
        """Whether the panel is in view."""
        return self.tab is None or self.w.tabs.currentWidget() is self.tab

    def refresh_if_shown(self) -> None:
        """Refresh now if out of date and in view; otherwise when next shown."""
        if self.stale and self.hub.session is not None and self.shown():
            self.stale = False
            self.refresh()

    def _session_changed(self) -> None:
        self.clear()
        self.stale = True
        self.refresh_if_shown()

    def _store_changed(self, _what: str) -> None:
        self.stale = True
        self.refresh_if_shown()
