"""The audit workspace's layout (issue 21 item 5): filters above the journal's rows, which
are read a page at a time as they come into view (gui.controllers.audit_log decides).

The model holds formatted pages only: a page's cells are made where it was read (off the
UI thread), and at most MAX_PAGES pages are held, so scrolling through a million entries
costs the UI thread what scrolling through a hundred does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from PySide6.QtCore import (
    QCoreApplication,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engram.control.audit_log import ACTIONS
from engram.control.wording import actor_named, day

COLUMNS = ("When", "Actor", "Action", "Cause")
PAGE = 50
MAX_PAGES = 40  # pages held at most; the oldest held go first
GROWTH = 20_000  # rows a model made off the UI thread grows by in one call
# Rows of an arrived page made into items per turn of the event loop: ten held the UI
# thread 60 ms while a page loaded beside it (every item call waits for the interpreter).
STORE_ROWS = 4
TIP_COLUMNS = frozenset({1, 2})  # the row's ids, on who and what (each tip is a call)
SEARCH_PAUSE_MS = 300  # typing pauses this long before a search starts


@dataclass(frozen=True, slots=True)
class AuditRow:
    """An audit row as the table shows it, formatted off the UI thread."""

    cells: tuple[str, str, str, str]
    tip: str
    links: tuple[dict[str, Any], ...]
    seq: int


def audit_row(row: dict[str, Any]) -> AuditRow:
    """Format one row of control.audit_log for the table."""
    return AuditRow(_cells(row), _tooltip(row), tuple(row.get("links") or ()), int(row["seq"]))


def _cells(row: dict[str, Any]) -> tuple[str, str, str, str]:
    extra = row.get("reason") or ""
    return (
        (row["at"] or "")[:19].replace("T", " "),
        actor_named(row["actor"]),  # the id stays in the tooltip
        row.get("said", row["action"]) + (f" — “{extra}”" if extra else ""),
        _cause(row),
    )


def _cause(row: dict[str, Any]) -> str:
    """The conversation an event came from, by the day it began ("chat of 7 Nov")."""
    if not row.get("cause"):
        return ""
    started = row.get("cause_started")
    if not started:
        return "a chat since deleted"
    return f"chat of {day(datetime.fromisoformat(started))}"


def _tooltip(row: dict[str, Any]) -> str:
    """The row with its ids, for whoever needs to find it elsewhere ("Copy id" people)."""
    cause = row.get("cause") or {}
    ids = " · ".join(
        f"{name} {value}" for name, value in cause.items() if isinstance(value, str) and value
    )
    tip = f"entry {row['seq']} by {row['actor']}: {row['action']}" + (
        f"\ncause: {ids}" if ids else ""
    )
    if row.get("links"):
        tip += "\nEnter opens what it is about"
    return tip


Loader = Callable[[int, Callable[[list[AuditRow]], None]], None]


class AuditModel(QStandardItemModel):
    """Every row of a listing exists; only pages that came into view hold items. Painting
    reads items in C++ — no Python call per cell — so a repaint costs the same whatever runs
    in the background (a search, a verify; the notes table's way, gui.notes_model). Pages
    are asked for off the UI thread (`loader`) when `request_rows` says they are in view,
    and made into items a few rows per turn of the event loop when they arrive."""

    stored = Signal()  # every page asked for so far holds its items

    def __init__(self) -> None:
        super().__init__(0, len(COLUMNS))
        self.setHorizontalHeaderLabels(list(COLUMNS))
        self._total = 0
        self._pages: dict[int, list[AuditRow]] = {}
        self._loading: set[int] = set()
        self.loader: Loader | None = None
        self.generation = 0  # moves with every new listing: late pages are dropped

    @property
    def rows(self) -> list[AuditRow]:
        """The rows held now, in order."""
        return [row for number in sorted(self._pages) for row in self._pages[number]]

    def show(self, total: int, pages: dict[int, list[AuditRow]], *, at_once: bool = False) -> None:
        """Show a listing of `total` rows, some of its pages at hand (stored in pieces, and
        `stored` says when, unless `at_once`)."""
        self.beginResetModel()
        blocked = self.blockSignals(True)
        self.generation += 1
        self._pages.clear()
        self._loading.clear()
        self.setRowCount(0)
        self._total = total
        self.setRowCount(total)
        # Known before the reset ends, so the view's first look asks for none of them.
        for number, page in pages.items():
            if at_once:
                self._pages[number] = page
                self._store_rows(number, page, 0, len(page))
            else:
                self._loading.add(number)
        self.blockSignals(blocked)
        self.endResetModel()
        if at_once:
            self.stored.emit()
            return
        # In pieces, as pages that arrive later: a worker busy in Python makes each item
        # call wait for the interpreter, so a few pages at once held the UI thread.
        generation = self.generation
        for number, page in pages.items():
            self._store_in_pieces(number, page, generation, 0)
        if not pages:
            self.stored.emit()

    def fill(self, total: int, pages: dict[int, list[AuditRow]]) -> None:
        """Make a new model hold a listing, its pages at hand as items: off the UI thread,
        before any view sees it (a million rows cost the UI thread 100 ms to make there),
        then handed to the UI thread. The view swaps it in (AuditLogView.use_model)."""
        blocked = self.blockSignals(True)
        self._total = total
        for rows in range(GROWTH, total + GROWTH, GROWTH):
            # A step at a time: one call holds the interpreter throughout (35 ms for a
            # million rows), which the UI thread would wait for; this way, 1 ms at most.
            self.setRowCount(min(rows, total))
        for number, page in pages.items():
            self._pages[number] = page
            self._store_rows(number, page, 0, len(page))
        self.blockSignals(blocked)
        app = QCoreApplication.instance()
        if app is not None and self.thread() is not app.thread():
            self.moveToThread(app.thread())

    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        """Show rows at hand, all of them (a short log read whole)."""
        formatted = [audit_row(r) for r in rows]
        pages = {n: formatted[n * PAGE : (n + 1) * PAGE] for n in range(len(rows) // PAGE + 1)}
        self.show(len(rows), pages, at_once=True)

    def grow(self, total: int) -> None:
        """The listing knows more rows (a search found more): add them below, keeping what
        is shown, selected and scrolled."""
        if total > self._total:
            self._total = total
            self.setRowCount(total)

    def row_at(self, row: int) -> AuditRow | None:
        """A row, if its page is held."""
        page = self._pages.get(row // PAGE)
        offset = row % PAGE
        return page[offset] if page is not None and offset < len(page) else None

    def request_rows(self, first: int, last: int) -> None:
        """Rows `first`..`last` are in view: ask for the pages they sit on."""
        if self._total == 0 or self.loader is None:
            return
        first, last = max(0, first), min(self._total - 1, last)
        for number in range(first // PAGE, last // PAGE + 1):
            if number not in self._pages and number not in self._loading:
                self._ask(number)

    def _ask(self, number: int) -> None:
        assert self.loader is not None
        self._loading.add(number)
        generation = self.generation

        def arrived(rows: list[AuditRow]) -> None:
            if generation == self.generation:  # else another listing is shown by now
                self._store_in_pieces(number, rows, generation, 0)

        self.loader(number, arrived)

    def _store_in_pieces(
        self, number: int, page: list[AuditRow], generation: int, start: int
    ) -> None:
        if generation != self.generation:
            return
        end = min(len(page), start + STORE_ROWS)
        self._store_rows(number, page, start, end)
        if end < len(page):
            QTimer.singleShot(0, self, lambda: self._store_in_pieces(number, page, generation, end))
            return
        self._loading.discard(number)
        self._pages[number] = page
        if not self._loading:
            self.stored.emit()
        while len(self._pages) > MAX_PAGES:  # the items of the page held longest go
            old = next(iter(self._pages))
            dropped = self._pages.pop(old)
            blocked = self.blockSignals(True)
            for row in range(old * PAGE, min(self._total, old * PAGE + len(dropped))):
                for column in range(len(COLUMNS)):
                    self.takeItem(row, column)
            self.blockSignals(blocked)

    def _store_rows(self, number: int, page: list[AuditRow], start: int, end: int) -> None:
        """Items for rows `start`..`end` - 1 of page `number`, and one change signal."""
        blocked = self.blockSignals(True)
        for offset in range(start, end):
            row = number * PAGE + offset
            if row >= self._total:
                break
            entry = page[offset]
            # As few calls as will do: each waits for the interpreter while a worker is busy.
            for column, cell in enumerate(entry.cells):
                item = QStandardItem(cell)
                if column in TIP_COLUMNS:
                    item.setToolTip(entry.tip)
                self.setItem(row, column, item)
        self.blockSignals(blocked)
        first, last = number * PAGE + start, min(self._total, number * PAGE + end) - 1
        if last >= first and not blocked:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(COLUMNS) - 1))


class AuditLogView(QWidget):
    """Filters (who, what, from, to, this note, words), the rows, Open and Save as CSV."""

    filter_changed = Signal()  # a choice changed: list again
    open_requested = Signal(list)  # the links of the row activated
    csv_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.actor = QComboBox()
        self.actor.setAccessibleName("Only entries by")
        self.actor.setToolTip("Only what one person, staff member or part of the agent did")
        self.action = QComboBox()
        self.action.setAccessibleName("Only entries of the kind")
        self.action.addItem("Every kind of entry", None)
        for value, words in sorted(ACTIONS.items(), key=lambda item: item[1]):
            self.action.addItem(words, value)
        self.since = QLineEdit()
        self.since.setPlaceholderText("from (YYYY-MM-DD)")
        self.since.setAccessibleName("Only entries from this date")
        self.until = QLineEdit()
        self.until.setPlaceholderText("to (YYYY-MM-DD)")
        self.until.setAccessibleName("Only entries up to this date")
        self.note_only = QCheckBox("Only the chosen note")
        self.note_only.setAccessibleName("Only entries about the note chosen in the Notes tab")
        self.note_only.setEnabled(False)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search the entries' words")
        self.search.setAccessibleName("Search the audit log")
        self.search.setClearButtonEnabled(True)
        for box in (self.actor, self.action):  # long names must not widen the window
            box.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            box.setMinimumContentsLength(14)
        for field in (self.since, self.until):
            field.setMaximumWidth(130)
        bar.addWidget(QLabel("Who"))
        bar.addWidget(self.actor, 1)
        bar.addWidget(QLabel("What"))
        bar.addWidget(self.action, 1)
        bar.addWidget(self.since)
        bar.addWidget(self.until)
        layout.addLayout(bar)
        second = QHBoxLayout()
        second.addWidget(self.search, 1)
        second.addWidget(self.note_only)
        layout.addLayout(second)
        self.span = QLabel("")
        self.span.setAccessibleName("What the audit log lists")
        layout.addWidget(self.span)
        self.model = AuditModel()
        self.table = QTableView()
        self.table.setModel(self.model)
        scroll = self.table.verticalScrollBar()  # the rows in view are asked for as it moves
        scroll.valueChanged.connect(lambda _v: self._visible())
        scroll.rangeChanged.connect(lambda _a, _b: self._visible())
        self._watch(self.model)
        self.table.setAccessibleName("Audit log")
        self.table.setToolTip("Every change to this person's memory: when, who, what, and why")
        self.table.setTabKeyNavigation(False)  # Tab leaves the table
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)  # fixed: never measures rows
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(0, 150)  # fixed widths: sizing to contents reads every row
        header.resizeSection(1, 130)
        layout.addWidget(self.table, 1)
        buttons = QHBoxLayout()
        self.open_button = QPushButton("&Go to what it is about")
        self.open_button.setAccessibleName("Open the note, suggestion or conversation of the entry")
        self.open_button.setEnabled(False)
        self.csv_button = QPushButton("Save as C&SV…")
        self.csv_button.setAccessibleName("Save the entries listed as a CSV file")
        buttons.addWidget(self.open_button)
        buttons.addStretch(1)
        buttons.addWidget(self.csv_button)
        layout.addLayout(buttons)
        self.pause = QTimer(self)
        self.pause.setSingleShot(True)
        self.pause.setInterval(SEARCH_PAUSE_MS)
        self.pause.timeout.connect(self.filter_changed.emit)
        for box in (self.actor, self.action):
            box.currentIndexChanged.connect(lambda _i: self.filter_changed.emit())
        for field in (self.since, self.until):
            field.editingFinished.connect(self._dates_edited)
        self.note_only.toggled.connect(lambda _on: self.filter_changed.emit())
        self.search.textChanged.connect(lambda _t: self.pause.start())  # restarts while typing
        self.search.returnPressed.connect(self._search_now)
        self.table.activated.connect(self._activated)
        self.open_button.clicked.connect(lambda: self._activated(self.table.currentIndex()))
        self.csv_button.clicked.connect(self.csv_requested.emit)
        self._dates = ("", "")
        self.set_actors([])

    def _watch(self, model: AuditModel) -> None:
        model.modelReset.connect(self._visible)
        model.rowsInserted.connect(lambda *_: self._visible())
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)

    def _visible(self) -> None:
        """Tell the model which rows the view shows."""
        view = self.table
        top = max(0, view.rowAt(0))
        bottom = view.rowAt(max(0, view.viewport().height() - 1))
        if bottom < 0:
            bottom = top + max(1, view.viewport().height() // 20)
        self.model.request_rows(top, bottom)

    def use_model(self, model: AuditModel) -> None:
        """Show another listing's model (made off the UI thread: AuditModel.fill)."""
        old, selection = self.model, self.table.selectionModel()
        old.generation += 1  # pages still on their way to it are dropped
        self.model = model
        self.table.setModel(model)
        selection.deleteLater()
        self._watch(model)
        self.open_button.setEnabled(False)
        self._visible()

    def set_actors(self, actors: list[str]) -> None:
        """The actor choices: everyone, then each who acted (in words, the id in its tip)."""
        chosen = self.actor.currentData()
        blocked = self.actor.blockSignals(True)
        self.actor.clear()
        self.actor.addItem("Everyone", None)
        for actor in actors:
            self.actor.addItem(actor_named(actor), actor)
            self.actor.setItemData(self.actor.count() - 1, actor, Qt.ItemDataRole.ToolTipRole)
        found = self.actor.findData(chosen) if chosen else 0
        self.actor.setCurrentIndex(max(0, found))
        self.actor.blockSignals(blocked)

    def offer_note(self, words: str | None, note: str | None) -> None:
        """The note chosen in the Notes tab, offered as a filter (None: no note chosen)."""
        self.note_only.setProperty("note", note)
        self.note_only.setEnabled(note is not None or self.note_only.isChecked())
        self.note_only.setText(f"Only {words}" if words else "Only the chosen note")
        self.note_only.setToolTip(f"note {note}" if note else "Choose a note in the Notes tab")

    def chosen(self) -> dict[str, Any]:
        """The filter as chosen: actor, action, since, until, note, words (as typed)."""
        note = self.note_only.property("note") if self.note_only.isChecked() else None
        return {
            "actor": self.actor.currentData(),
            "action": self.action.currentData(),
            "since": self.since.text().strip(),
            "until": self.until.text().strip(),
            "note": note,
            "words": self.search.text().strip(),
        }

    def _dates_edited(self) -> None:
        dates = (self.since.text().strip(), self.until.text().strip())
        if dates != self._dates:
            self._dates = dates
            self.filter_changed.emit()

    def _search_now(self) -> None:
        self.pause.stop()
        self.filter_changed.emit()

    def _links(self, index: QModelIndex | QPersistentModelIndex) -> list[dict[str, Any]]:
        row = self.model.row_at(index.row()) if index.isValid() else None
        return list(row.links) if row is not None else []

    def _row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.open_button.setEnabled(bool(self._links(current)))

    def _activated(self, index: QModelIndex) -> None:
        links = self._links(index)
        if links:
            self.open_requested.emit(links)

    def clear(self) -> None:
        """Forget what was shown (locking, another person)."""
        self.pause.stop()
        for field in (self.search, self.since, self.until):
            blocked = field.blockSignals(True)
            field.clear()
            field.blockSignals(blocked)
        self._dates = ("", "")
        blocked = self.note_only.blockSignals(True)
        self.note_only.setChecked(False)
        self.note_only.blockSignals(blocked)
        empty = AuditModel()
        empty.loader = self.model.loader
        self.use_model(empty)
        self.span.setText("")
        self.set_actors([])
        self.offer_note(None, None)
