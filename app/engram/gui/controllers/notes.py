"""The notes table, its filters and time travel, the note detail, and the note actions
(edit text, change scope, delete)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QApplication, QWidget
from shiboken6 import isValid

from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.panel import PanelController
from engram.gui.notes_model import SORT_KEYS, ListSource, LiveSource, NotesSource
from engram.gui.tasks import Task, TaskContext
from engram.gui.widgets import offer
from engram.model.errors import NotFound
from engram.model.notes import NoteFilter, NoteStatus
from engram.model.scope import Kind, Scope

SEARCH_DELAY_MS = 250
LOADING_AFTER_MS = 200  # a detail slower than this no longer shows the note chosen before


class NotesController(PanelController):
    """Always in view (the table's tab is the first, the detail pane is beside every tab)."""

    notes_shown = Signal()
    note_selected = Signal(str)  # at once, before its detail arrives
    detail_shown = Signal(str)
    rows_completed = Signal()  # a text search found the rest of its matches
    many_requested = Signal(str)  # Delete or Change scope with several rows selected

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        w = self.w
        self.selected: str | None = None
        self.detail: dict[str, Any] | None = None
        self._person: str | None = None  # whose filters are set
        self._notes_task: Task | None = None
        self._detail_request = 0  # the newest detail asked for; older answers are dropped
        self._loading = QTimer(self)
        self._loading.setSingleShot(True)
        self._loading.setInterval(LOADING_AFTER_MS)
        self._loading.timeout.connect(self._still_loading)
        self._sort: tuple[str, bool] = ("rank", False)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.refresh)
        w.notes_model.loader = self._load_page
        f = w.filters
        f.search.textChanged.connect(lambda _t: self._search_timer.start())
        for combo in (f.status, f.scope, f.kind):
            combo.currentIndexChanged.connect(lambda _i: self.refresh_notes())
        f.time_travel.toggled.connect(self._time_travel_toggled)
        f.since.toggled.connect(lambda _on: self.refresh_notes())
        f.moment.dateTimeChanged.connect(lambda _m: self._search_timer.start())
        w.table.selectionModel().currentRowChanged.connect(self._row_changed)
        w.table.selectionModel().selectionChanged.connect(lambda *_: self._update_actions())
        w.table.horizontalHeader().sortIndicatorChanged.connect(self._sort_changed)
        w.find_action.triggered.connect(self._focus_search)
        w.time_travel_action.triggered.connect(f.time_travel.toggle)
        for signal, act in (
            (w.edit_action.triggered, self.edit_selected),
            (w.scope_action.triggered, self.scope_selected),
            (w.delete_action.triggered, self.delete_selected),
            (w.detail.edit_requested, self.edit_selected),
            (w.detail.scope_requested, self.scope_selected),
            (w.detail.delete_requested, self.delete_selected),
        ):
            signal.connect(act)
        w.detail.note_requested.connect(self.select_note)
        w.time_travel_banner.now_button.clicked.connect(lambda: f.time_travel.setChecked(False))
        # Note actions act on what is seen: only while the notes table or the note detail
        # is the current view, and only on an active note of the present.
        w.tabs.currentChanged.connect(lambda _i: self._update_actions())
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._focus_changed)  # a method: gone with self

    # ---- what the panel shows -----------------------------------------------------------

    def clear(self) -> None:
        if self._notes_task is not None:
            self.hub.tasks.drop(self._notes_task)  # a search still decrypting stops early
        self._notes_task = None
        self.selected = None
        self.detail = None
        self._reset_filters()
        if self.hub.session is None:
            self.w.notes_model.clear_rows()
            self.w.filters.count.setText("")  # not the last person's count over no rows
        # else another person: their listing replaces the rows in a moment, and emptying
        # the table first would cost a second reset and repaint while they wait.
        self.w.detail.show_detail(None)
        self._update_actions()

    def _reset_filters(self) -> None:
        """Another person starts with every active note, no search and the present; the
        status bar says so when something was set."""
        session = self.hub.session
        person = session.person if session is not None else None
        if person == self._person or (person is None and self.hub.store is not None):
            return  # the same person, or nobody while the next one opens: they reset then
        self._person = person
        self._search_timer.stop()
        past = self.hub.past
        searching = self.w.filters.reset()
        if past:  # reset() is silent: every panel hears that the present is back
            self.hub.past_changed.emit(False)
        searching = self.w.conversations.reset_search() or searching
        self.w.time_travel_banner.show_moment(None)
        if searching and person is not None:
            self.hub.status(f"Showing {person}: filters and searches were reset.", 8000)

    def refresh(self) -> None:
        self.refresh_notes()
        if self.selected:
            self.select_note(self.selected)
        else:
            self.w.detail.show_detail(None)
            self._update_actions()

    def _editable(self) -> bool:
        detail = self.detail
        return (
            self.hub.session is not None
            and detail is not None
            and detail["id"] == self.selected  # the detail on screen is the row chosen
            and detail["status"] == "active"
            and self.w.detail.as_of is None
            and self.moment() is None
        )

    def _in_view(self) -> bool:
        if self.w.tabs.currentIndex() == 0:
            return True
        focus = QApplication.focusWidget()
        return isinstance(focus, QWidget) and (
            focus is self.w.detail or self.w.detail.isAncestorOf(focus)
        )

    def _focus_changed(self, _old: QWidget | None, _new: QWidget | None) -> None:
        # While the window is torn down its widgets go before this panel does, and focus
        # leaving them is announced meanwhile: nothing is left to update then.
        if isValid(self.w.filters.time_travel) and isValid(self.w.tabs):
            self._update_actions()

    def selected_ids(self) -> list[str]:
        """The ids of every selected row, top to bottom."""
        rows = sorted({i.row() for i in self.w.table.selectionModel().selectedRows()})
        found = (self.w.notes_model.note_at(r) for r in rows)
        return [n.id for n in found if n is not None]

    def _many(self) -> bool:
        return len(self.w.table.selectionModel().selectedRows()) > 1 and self.moment() is None

    def _update_actions(self) -> None:
        editable, past = self._editable(), self.hub.frozen
        many = self._many() and self.hub.session is not None
        in_view = self._in_view()
        offer(self.w.edit_action, editable and in_view, past)
        for action in (self.w.scope_action, self.w.delete_action):
            offer(action, (editable or many) and in_view, past)
        offer(self.w.forget_action, (editable or many) and in_view, past)
        offer(self.w.forget_about_action, self.hub.session is not None, past)
        detail = self.w.detail
        for button in (detail.edit_button, detail.scope_button, detail.delete_button):
            offer(button, editable, past)

    def _load_page(self, load: Any, done: Any) -> None:
        self.hub.run(lambda _: load(), done)

    def _focus_search(self) -> None:
        self.w.tabs.setCurrentIndex(0)
        self.w.filters.search.setFocus()

    def _filter(self) -> NoteFilter:
        f = self.w.filters
        statuses = f.status.currentData()
        scopes = f.scope.currentData()
        kinds = f.kind.currentData()
        order, descending = self._sort
        return NoteFilter(
            statuses=None if statuses is None else [NoteStatus(s) for s in statuses],
            scopes=None if scopes is None else [Scope(s) for s in scopes],
            kinds=None if kinds is None else [Kind(k) for k in kinds],
            order=order,
            descending=descending,
            created_after_seq=(f.last_visit or 0) if f.since.isChecked() else None,
        )

    def moment(self) -> datetime | None:
        """The moment time travel shows, or None for now."""
        f = self.w.filters
        if not f.time_travel.isChecked():
            return None
        chosen = f.moment.dateTime().toPython()
        assert isinstance(chosen, datetime)
        return chosen.replace(tzinfo=UTC)

    def _time_travel_toggled(self, on: bool) -> None:
        self.w.filters.moment.setEnabled(on)
        self._update_actions()
        self.refresh()

    def _sort_changed(self, column: int, order: Qt.SortOrder) -> None:
        key = SORT_KEYS.get(column)
        header = self.w.table.horizontalHeader()
        if key is None:
            header.blockSignals(True)
            header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
            header.blockSignals(False)
            self._sort = ("rank", False)
        else:
            self._sort = (key, order == Qt.SortOrder.DescendingOrder)
        self.refresh_notes()

    def refresh_notes(self) -> None:
        """Rebuild the table's source from the filters (text search and time travel decrypt
        or replay, so they run in the background)."""
        session = self.hub.session
        if session is None:
            return
        note_filter = self._filter()
        needle = self.w.filters.search.text().strip()
        moment = self.moment()

        def work(_: TaskContext) -> NotesSource:
            # The engine filters (issue 17 item 9): text from its in-memory index, the
            # past from its held fold, a page at a time.
            if moment is not None:
                then = memory_control.notes_then(session, moment, note_filter, needle)
                return ListSource(then, session)
            if needle:
                found = memory_control.matching_text(session, note_filter, needle)
                return ListSource(found, session)
            return LiveSource(session, note_filter)

        def done(source: NotesSource) -> None:
            if task is not self._notes_task:
                return  # a newer listing replaced this one
            # A new list starts at its top, where its first page already is. Scroll there
            # before the reset, or the reset asks for the pages under the old scroll
            # position: loads nobody sees, working while the window repaints.
            self.w.table.scrollToTop()
            self.w.notes_model.set_source(session, source)
            # The moment goes in the banner, not here: a long label would widen the window.
            self._show_count(source.total(), final=True)
            self.w.time_travel_banner.show_moment(_moment_text(moment))
            self._reselect()
            self.notes_shown.emit()
            pages = getattr(source, "pages", None)
            if isinstance(pages, memory_control.TextPages) and not pages.complete:
                self._show_count(source.total(), final=False)
                self._find_rest(source, pages)
            if isinstance(source, LiveSource):  # last: it works in Python beside the repaint
                self.hub.run(lambda _: source.load_ids(), background=True)
                self._warm_up(session, note_filter)

        if self._notes_task is not None:
            self.hub.tasks.drop(self._notes_task)  # a search still decrypting stops early
        # A search or the past reads every note of the person, which takes a while on a big
        # one: it runs as a job, so pages and details keep coming meanwhile.
        slow = _listing_job(session.person, needle, moment)
        task = self.hub.run(work, done, job=slow, on_cancel=self._listing_cancelled)
        self._notes_task = task

    def _show_count(self, total: int, *, final: bool) -> None:
        more = "" if final else "+"  # a search still finding the rest below its first page
        self.w.filters.count.setText(f"{total}{more} note{'s' if total != 1 or more else ''}")

    def _find_rest(self, source: NotesSource, pages: memory_control.TextPages) -> None:
        """After a search's first page is shown: find the rest of its matches and add them
        as rows below (the count says '50+ notes' until then)."""

        def done(total: int) -> None:
            if self.w.notes_model.showing(source):
                self.w.notes_model.grow(source, total)
                self._show_count(total, final=True)
                self.rows_completed.emit()

        self.hub.run(lambda _: pages.finish(), done)

    def _warm_up(self, session: PersonSession, note_filter: NoteFilter) -> None:
        """Build the engine's note index behind the listing, a short step per task, so the
        first search or trip to the past after it costs what it shows, not the person's
        size (issue 17 item 9), and no step keeps a page or a detail waiting for long."""

        def step(_: TaskContext) -> bool:
            return memory_control.warm_up(session, note_filter)

        def done(more: bool) -> None:
            if more and self.hub.session is session:
                self.hub.run(step, done, background=True)

        self.hub.run(step, done, background=True)

    def _listing_cancelled(self) -> None:
        self._notes_task = None
        self.hub.status("Cancelled: the table still shows the notes it showed before.")

    def _reselect(self) -> None:
        if self.selected is None:
            return
        row = self.w.notes_model.row_of(self.selected)
        if row is not None:
            self.w.table.blockSignals(True)
            self.w.table.selectRow(row)
            self.w.table.blockSignals(False)

    def _row_changed(self, current: Any, _previous: Any) -> None:
        note = self.w.notes_model.note_at(current.row()) if current.isValid() else None
        if note is not None and note.id != self.selected:
            self.select_note(note.id)

    def select_note(self, note_id: str) -> None:
        """Show a note's detail (versions, provenance, arithmetic, usage)."""
        session = self.hub.session
        if session is None:
            return
        # From now until this note's detail arrives, nothing acts on the note chosen
        # before: Down then Del must never delete the row just left (issue 17 item 2).
        self.selected = note_id
        self.detail = None
        self._detail_request += 1
        request = self._detail_request
        self.w.detail.hold()
        self._update_actions()
        self._loading.start()
        self.note_selected.emit(note_id)
        moment = self.moment()

        def work(_: TaskContext) -> dict[str, Any] | None:
            try:
                detail = memory_control.show_note(session, note_id, as_of=moment)
            except NotFound:
                if moment is None:
                    raise
                return None  # it did not exist yet then
            closed = detail.get("closed_by") or {}
            if closed.get("note"):  # say what closed it by its words, not its id
                notes = memory_control.notes_by_ids(session, [closed["note"]])
                closed["note_text"] = memory_control.texts_of(session, notes).get(closed["note"])
            return detail

        def done(detail: dict[str, Any] | None) -> None:
            if request != self._detail_request:
                return  # another note was chosen since: its own detail is on its way
            self._loading.stop()
            self.detail = detail
            when = _moment_text(moment)
            if detail is None and when is not None:
                self.w.detail.show_absent(when)
            else:
                self.w.detail.show_detail(detail, when)
            self._update_actions()
            self.detail_shown.emit(note_id)

        self.hub.run(work, done)

    def _still_loading(self) -> None:
        if self.detail is None and self.selected is not None:
            self.w.detail.show_loading()

    # ---- the note actions ---------------------------------------------------------------

    def _active_detail(self) -> tuple[PersonSession, dict[str, Any]] | None:
        """The session and the note on screen, read when the key is pressed: the action
        carries this note's id, whatever is selected by the time its work runs."""
        session, detail = self.hub.session, self.detail
        if session is None:
            return None
        if detail is None:
            if self.selected is not None:
                self.hub.status("The note is still loading; try again when it shows.")
            return None
        if not self.hub.writable():  # the buttons and actions are disabled; say why anyway
            return None
        if not self._editable():
            self.hub.status("Only active notes can be changed.")
            return None
        return session, detail

    def _changed_to(self, note: str) -> None:
        self.selected = note  # the new version takes the old one's place on screen

    def edit_selected(self) -> None:
        """Edit the selected note's text: a new version, the old one closed (C5)."""
        target = self._active_detail()
        if target is None:
            return
        session, detail = target
        text = self.hub.ask(
            lambda p: p.edit_text(detail["text"] or ""), "the note's text is unchanged."
        )
        if text is None or text.strip() == (detail["text"] or "").strip():
            return
        self.hub.act(
            lambda: memory_control.edit_note(session, detail["id"], text=text),
            "Note edited; the earlier version is kept, closed.",
            self._changed_to,
        )

    def scope_selected(self) -> None:
        """Change who the selected note may reach (several rows: each, after a preview)."""
        if self._many():
            self.many_requested.emit("rescope")
            return
        target = self._active_detail()
        if target is None:
            return
        session, detail = target
        scope = self.hub.ask(
            lambda p: p.choose_scope(Scope(detail["scope"]), detail["text"] or "[removed]"),
            "the note's scope is unchanged.",
        )
        if scope is None or scope.value == detail["scope"]:
            return
        self.hub.act(
            lambda: memory_control.edit_note(session, detail["id"], scope=scope),
            f"Scope changed to {scope.value}.",
            self._changed_to,
        )

    def delete_selected(self) -> None:
        """Delete the selected note: its interval closes, its record stays (C2). Several
        rows: each, in one change, after a preview."""
        if self._many():
            self.many_requested.emit("delete")
            return
        target = self._active_detail()
        if target is None:
            return
        session, detail = target
        reason = self.hub.ask(
            lambda p: p.delete_reason(detail["text"] or "[removed]"), "the note was not deleted."
        )
        if reason is None:
            return
        self.hub.act(
            lambda: memory_control.delete_note(session, detail["id"], reason or None),
            "Note deleted; its record stays in the audit log.",
        )


def _listing_job(person: str, needle: str, moment: datetime | None) -> str | None:
    """The jobs strip's title for a listing that reads every note (None: a plain listing,
    which pages from the database)."""
    if moment is not None:
        return f"Showing {person}'s notes as of {_moment_text(moment)}"
    if needle:
        return f"Searching {person}'s notes"
    return None


def _moment_text(moment: datetime | None) -> str | None:
    return None if moment is None else f"{moment:%Y-%m-%d %H:%M} UTC"
