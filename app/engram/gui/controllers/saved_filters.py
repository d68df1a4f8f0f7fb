"""Saved filters (issue 21 item 7): the notes filters set now, saved under a name on this
computer (QSettings), and set again by choosing the name from the list beside the search
field. Saving under a name already used replaces it; "Remove a saved filter…", last in
the list, takes one away."""

from __future__ import annotations

import json

from PySide6.QtCore import QObject, QSettings

from engram.gui.controllers.hub import Hub
from engram.gui.controllers.notes import NotesController

KEY = "notes/saved_filters"
MAX_NAME_CHARS = 80


class SavedFiltersController(QObject):
    def __init__(self, hub: Hub, notes: NotesController, settings: QSettings) -> None:
        super().__init__(hub)
        self.hub, self.notes, self.settings = hub, notes, settings
        f = hub.w.filters
        f.save_button.clicked.connect(self.save)
        f.saved.activated.connect(self._chosen)
        self._fill()

    def _saved(self) -> dict[str, dict[str, object]]:
        try:
            found = json.loads(str(self.settings.value(KEY, "{}")))
        except ValueError:
            return {}  # a settings file edited by hand: start again rather than fail
        return found if isinstance(found, dict) else {}

    def _fill(self) -> None:
        combo = self.hub.w.filters.saved
        combo.blockSignals(True)
        while combo.count() > 1:
            combo.removeItem(1)
        names = sorted(self._saved(), key=str.casefold)
        for name in names:
            combo.addItem(name, name)
        if names:
            combo.addItem("Remove a saved filter…", "")
        combo.setCurrentIndex(0)
        combo.blockSignals(False)

    def save(self) -> None:
        name = self.hub.ask(lambda p: p.filter_name(), "the filters were not saved.")
        if not name:
            return
        name = " ".join(name.split())[:MAX_NAME_CHARS]
        saved = self._saved()
        saved[name] = self.hub.w.filters.state()
        self.settings.setValue(KEY, json.dumps(saved))
        self._fill()
        self.hub.status(f"Filters saved as “{name}”; choose it from Saved filters.")

    def _chosen(self, index: int) -> None:
        f = self.hub.w.filters
        name = f.saved.itemData(index)
        f.saved.setCurrentIndex(0)  # the list is a menu of names, not a state
        if name == "":
            self._remove()
            return
        state = self._saved().get(str(name)) if name else None
        if state is None:
            return
        f.restore(state)
        self.notes.refresh_notes()
        self.hub.status(f"Filters set as saved in “{name}”.")

    def _remove(self) -> None:
        saved = self._saved()
        choices = [(name, name) for name in sorted(saved, key=str.casefold)]
        name = self.hub.ask(
            lambda p: p.choose("Remove a saved filter", "Which saved filter should go?", choices),
            "no saved filter was removed.",
        )
        if name is None or name not in saved:
            return
        del saved[name]
        self.settings.setValue(KEY, json.dumps(saved))
        self._fill()
        self.hub.status(f"The saved filter “{name}” was removed.")
