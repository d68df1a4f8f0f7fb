"""The audit workspace's behaviour (issue 21 item 5): list the journal as the filters say, a
page at a time, off the UI thread; search as the typing pauses; open what a row is about;
save the listed rows as CSV. The logic is control.audit_log's; this only asks and shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal

from engram.control import audit_log
from engram.control.audit_log import AuditFilter, AuditPages
from engram.control.session import PersonSession
from engram.control.wording import counted, quoted
from engram.gui.audit_log_view import PAGE, AuditModel, AuditRow, audit_row
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.panel import PanelController
from engram.gui.tasks import Task, TaskContext
from engram.model.errors import EngramError

INITIAL_ALL = 500  # a journal this short is read whole when shown
FIRST_LOOK = 2_000  # rows a search looks at before showing what it found


def _filter(chosen: dict[str, Any]) -> AuditFilter:
    """The filter the view's choices make (a date typed wrong raises, in one sentence)."""
    return AuditFilter(
        actors=(chosen["actor"],) if chosen["actor"] else (),
        actions=(chosen["action"],) if chosen["action"] else (),
        since=audit_log.day_start(chosen["since"]) if chosen["since"] else None,
        until=audit_log.day_end(chosen["until"]) if chosen["until"] else None,
        note=chosen["note"],
        words=chosen["words"],
    )


class Listing:
    """One listing on screen: its pages, and the rows it had at hand when shown."""

    def __init__(self, pages: AuditPages) -> None:
        self.pages = pages
        self.first: dict[int, list[AuditRow]] = {}

    def load(self, number: int) -> list[AuditRow]:
        """A page of formatted rows (off the UI thread). A search's page holds only what
        was found so far: finding more is the search job's work, not a page's."""
        offset, limit = number * PAGE, PAGE
        if self.pages.searching:
            limit = min(PAGE, max(0, self.pages.total - offset))
            if not limit:
                return []
        return [audit_row(r) for r in self.pages.page(offset, limit)]


class AuditLogController(PanelController):
    """Loads the log when the Audit tab is shown, and again when a filter changes."""

    audit_shown = Signal()
    search_finished = Signal(int)  # a word search counted all its matches
    link_opened = Signal(dict)  # the link a row's activation followed
    note_requested = Signal(str)
    candidate_requested = Signal(str)
    turn_requested = Signal(str, str)
    csv_saved = Signal(str)
    shows_records = True

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.tab = self.w.audit
        self.view = self.w.audit.log
        self.listing: Listing | None = None
        self._task: Task | None = None
        self._finish_task: Task | None = None
        self.view.model.loader = self._load_page
        self.view.filter_changed.connect(self.refresh)
        self.view.open_requested.connect(self.open_link)
        self.view.csv_requested.connect(self.save_csv)
        hub.past_changed.connect(lambda _past: self._offer_csv())

    def _offer_csv(self) -> None:
        # A CSV is recorded in the audit log before it is written: not on a read-only store.
        self.view.csv_button.setEnabled(self.hub.session is not None and not self.hub.read_only)

    def clear(self) -> None:
        self._stop()
        self.listing = None
        self.view.clear()
        self._offer_csv()

    def _stop(self) -> None:
        for task in (self._task, self._finish_task):
            if task is not None:
                self.hub.tasks.drop(task)
        self._task = self._finish_task = None

    def refresh(self) -> None:
        session = self.hub.session
        if session is None:
            return
        self._offer_csv()
        try:
            chosen = _filter(self.view.chosen())
        except EngramError as error:
            self.view.span.setText(str(error))
            return
        self._stop()

        def work(_: TaskContext) -> tuple[Listing, list[str], AuditModel]:
            listing = Listing(AuditPages(session, chosen))
            pages = listing.pages
            if pages.searching:  # what a first look finds; the rest is found after
                pages.look(PAGE, FIRST_LOOK)
                listing.first[0] = listing.load(0)
            else:
                total = pages.total
                last = max(0, total - 1) // PAGE
                wanted = range(last + 1) if total <= INITIAL_ALL else {0, max(0, last - 1), last}
                for number in sorted(wanted):
                    listing.first[number] = listing.load(number)
            model = AuditModel()  # made here, not on the UI thread
            model.fill(pages.total, listing.first)
            return listing, audit_log.audit_actors(session), model

        def done(result: tuple[Listing, list[str], AuditModel]) -> None:
            if task is not self._task:
                return  # a newer listing replaced this one
            self._task = None
            listing, actors, model = result
            self.listing = listing
            pages = listing.pages
            self.view.set_actors(actors)
            self.view.table.scrollToTop()
            model.loader = self._load_page
            self.view.use_model(model)
            self._show_span(listing, final=pages.complete)
            if not pages.searching and listing.first:
                self.view.table.scrollToBottom()  # the newest last, as the journal keeps them
            self.audit_shown.emit()
            if pages.searching and not pages.complete:
                self._find_rest(session, listing)
            elif not pages.searching:
                self.hub.run(lambda _: pages.load_seqs(), background=True)

        task = self.hub.run(work, done)
        self._task = task

    def _show_span(self, listing: Listing, *, final: bool) -> None:
        pages = listing.pages
        entries = counted(pages.total, "journal entry", "journal entries")
        if pages.searching:
            more = "" if final else " so far; still looking"
            self.view.span.setText(f"{entries} hold those words{more}.")
        elif pages.filter == AuditFilter():
            self.view.span.setText(f"All {entries}, the newest last.")
        else:
            self.view.span.setText(f"{entries} match, the newest last.")

    def _find_rest(self, session: PersonSession, listing: Listing) -> None:
        """Search the rest of the journal in the jobs lane, with progress and Cancel; the
        rows found are added below as they are counted."""

        def done(total: int) -> None:
            self._finish_task = None
            if self.listing is listing:
                self.view.model.grow(total)
                self._show_span(listing, final=listing.pages.complete)
                self.search_finished.emit(total)

        def cancelled() -> None:
            self._finish_task = None
            if self.listing is listing:
                self.view.model.grow(listing.pages.total)
                self.view.span.setText(
                    f"Search stopped: {counted(listing.pages.total, 'entry', 'entries')} "
                    "found before it stopped."
                )

        def found_more(_looked: int, _total: int) -> None:
            if self.listing is listing and self._finish_task is task:
                self.view.model.grow(listing.pages.total)
                self._show_span(listing, final=False)

        task = self.hub.run(
            lambda ctx: listing.pages.finish(ctx.progress, ctx.cancelled),
            done,
            job=f"Searching {session.person}'s audit log",
            on_cancel=cancelled,
        )
        task.progressed.connect(found_more)
        self._finish_task = task

    def _load_page(self, number: int, arrived: Any) -> None:
        listing = self.listing
        if listing is not None:
            self.hub.run(lambda _: listing.load(number), arrived)

    # ---- where a row leads ------------------------------------------------------------

    def open_link(self, links: list[dict[str, Any]]) -> None:
        """Go where a row leads: its suggestion, note, turn or conversation."""
        if not links:
            return
        link = links[0]
        self.link_opened.emit(link)
        if link["kind"] == "note":
            self.note_requested.emit(link["id"])
        elif link["kind"] == "candidate":
            self.candidate_requested.emit(link["id"])
        else:
            self.turn_requested.emit(link["conversation"], link.get("turn") or "")

    def offer_note(self, note: str, detail: dict[str, Any] | None) -> None:
        """The note chosen in the Notes tab becomes the "only this note" choice."""
        text = (detail or {}).get("text") if (detail or {}).get("id") == note else None
        self.view.offer_note(quoted(text, 30) if text else "the chosen note", note)

    # ---- CSV --------------------------------------------------------------------------

    def save_csv(self) -> None:
        """Save the rows listed as CSV where the person chooses; recorded in the audit log."""
        session = self.hub.session
        if session is None:
            return
        try:
            chosen = _filter(self.view.chosen())
        except EngramError as error:
            self.hub.fail(str(error))
            return
        person = session.person
        path = self.hub.ask(
            lambda p: p.save_path(
                f"{person}-audit.csv", f"Save {person}'s audit log entries (not encrypted)"
            ),
            "no CSV was saved.",
        )
        if not path:
            return

        def done(written: Path | None) -> None:
            if written is None:
                return
            message = f"Saved the audit log entries listed to {written} (not encrypted)."
            self.hub.status(message, 10_000)
            self.hub.recorded.emit(message)  # the audit log holds the export now
            self.csv_saved.emit(str(written))

        self.hub.run(
            lambda ctx: audit_log.write_csv(session, chosen, path, ctx.progress, ctx.cancelled),
            done,
            job=f"Saving {person}'s audit log as CSV",
        )
