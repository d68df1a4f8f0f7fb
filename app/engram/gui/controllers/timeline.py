"""The timeline tab: the newest validity intervals as bars; a bar selects its note."""

from __future__ import annotations

from engram.control import notes as memory_control
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.panel import PanelController
from engram.gui.tasks import TaskContext
from engram.gui.timeline_view import TimelineRow
from engram.model.notes import NoteFilter

TIMELINE_ROWS = 300


class TimelineController(PanelController):
    """Loads when shown; outlines the note selected anywhere."""

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.tab = self.w.timeline_tab
        self.selected: str | None = None

    def show_selected(self, note_id: str) -> None:
        """Outline the bar of the note selected elsewhere."""
        self.selected = note_id
        self.w.timeline.select(note_id)

    def clear(self) -> None:
        self.selected = None
        self.w.timeline.clear()

    def refresh(self) -> None:
        session = self.hub.session
        if session is None:
            return

        def work(_: TaskContext) -> list[TimelineRow]:
            recent = NoteFilter(statuses=None, order="created", descending=True)
            notes = memory_control.page(session, recent, offset=0, limit=TIMELINE_ROWS)[1]
            notes.reverse()
            texts = memory_control.texts_of(session, notes)
            return [TimelineRow(n, texts[n.id] or "[removed]") for n in notes]

        def done(rows: list[TimelineRow]) -> None:
            self.w.timeline.set_rows(rows, session.store.now())
            self.w.timeline.select(self.selected)

        self.hub.run(work, done)
