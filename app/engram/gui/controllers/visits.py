"""Where each visit to a person ended, per store and person on this computer, for the notes
filter "New since last visit" (issue 21 item 7). When a person opens, the mark the last
visit left tells the filter where "new" starts; each time the table lists the notes, the
mark moves to the journal's head then, so what this visit showed (and any change made
here) is not new next time, and a crash loses at most the last listing's move."""

from __future__ import annotations

from PySide6.QtCore import QObject, QSettings, Signal

from engram.control import undo
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.notes import NotesController


class VisitsController(QObject):
    marked = Signal()  # the mark moved to what the table showed

    def __init__(self, hub: Hub, notes: NotesController, settings: QSettings) -> None:
        super().__init__(hub)
        self.hub, self.settings = hub, settings
        hub.session_changed.connect(self._session_changed)
        notes.notes_shown.connect(self._mark)

    def _key(self) -> str | None:
        session, store = self.hub.session, self.hub.store
        if session is None or store is None:
            return None
        return f"visits/{store.info.id}/{session.person}"

    def _session_changed(self) -> None:
        key, session = self._key(), self.hub.session
        if key is None or session is None:
            return
        before = self.settings.value(key)
        last = int(str(before)) if before is not None else None
        self.hub.w.filters.set_last_visit(last, session.person)

    def _mark(self) -> None:
        key, session = self._key(), self.hub.session
        if key is None or session is None or self.hub.past:
            return

        def seen(head: int) -> None:
            if self.hub.session is session:
                self.settings.setValue(key, head)
                self.marked.emit()

        self.hub.run(lambda _: undo.session_start(session), seen, background=True)
