"""The timeline tab: validity intervals as bars, a page of the newest first and Older /
Newer back through every note (issue 21 item 5); a bar selects its note."""

from __future__ import annotations

from PySide6.QtCore import Signal

from engram.control import notes as memory_control
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.panel import PanelController
from engram.gui.tasks import TaskContext
from engram.gui.timeline_view import TimelineRow
from engram.model.notes import NoteFilter

TIMELINE_ROWS = 300


class TimelineController(PanelController):
    """Loads when shown; outlines the note selected anywhere."""

    timeline_shown = Signal()

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.tab = self.w.timeline_tab
        self.selected: str | None = None
        self.offset = 0  # notes skipped from the newest
        self._person: str | None = None
        self.w.timeline_pager.older_requested.connect(lambda: self._page(TIMELINE_ROWS))
        self.w.timeline_pager.newer_requested.connect(lambda: self._page(-TIMELINE_ROWS))

    def _page(self, step: int) -> None:
        self.offset = max(0, self.offset + step)
        self.refresh()

    def show_selected(self, note_id: str) -> None:
        """Outline the bar of the note selected elsewhere."""
        self.selected = note_id
        self.w.timeline.select(note_id)

    def clear(self) -> None:
        self.selected = None
        if self.hub.session is None or self.hub.session.person != self._person:
            self.offset = 0  # another person starts at their newest notes
        self.w.timeline.clear()
        self.w.timeline_pager.show_span(0, 0, 0)

    def refresh(self) -> None:
        session = self.hub.session
        if session is None:
            return

        self._person = session.person
        offset = self.offset

        def work(_: TaskContext) -> tuple[int, int, list[TimelineRow]]:
            recent = NoteFilter(statuses=None, order="created", descending=True)
            total, notes = memory_control.page(session, recent, offset=offset, limit=TIMELINE_ROWS)
            start = offset
            if not notes and total:  # fewer notes than before: the oldest page there is
                start = (total - 1) // TIMELINE_ROWS * TIMELINE_ROWS
                notes = memory_control.page(session, recent, offset=start, limit=TIMELINE_ROWS)[1]
            notes.reverse()
            texts = memory_control.texts_of(session, notes)
            return start, total, [TimelineRow(n, texts[n.id] or "[removed]") for n in notes]

        def done(result: tuple[int, int, list[TimelineRow]]) -> None:
            start, total, rows = result
            self.offset = start
            self.w.timeline.set_rows(rows, session.store.now())
            self.w.timeline.select(self.selected)
            self.w.timeline_pager.show_span(start, len(rows), total)
            self.timeline_shown.emit()

        self.hub.run(work, done)
