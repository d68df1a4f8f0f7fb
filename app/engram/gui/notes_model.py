"""The notes table: lazy rows over an id-ordered source (after Anki's browser table).

A NotesSource knows the total and reads a page of notes (with their decrypted text) at a
time; sorting and field filters happen in SQL (control.notes), text search and time travel
produce a list off the UI thread. The model holds items only for pages that came into view,
so painting never calls Python per cell.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QPoint, QRect, QSize, Qt, QTimer
from PySide6.QtGui import (
    QFont,
    QFontMetrics,
    QGuiApplication,
    QIcon,
    QPainter,
    QPixmap,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import QTableView

from engram.control import notes as memory_control
from engram.control.notes import HeldPages, NotePages
from engram.control.session import PersonSession
from engram.control.wording import day
from engram.gui import theme
from engram.model.clock import iso
from engram.model.ids import NoteId
from engram.model.notes import Note, NoteFilter
from engram.model.scope import Scope

PAGE = 50
STORE_ROWS = 10  # rows of an arrived page made into items per turn of the event loop
# Pages holding items at most: the oldest stored go first. Items of every page scrolled past
# (hundreds of thousands after a minute of scrolling 100k notes) made the next reset free
# them all in one call, a 2 s stop of the UI thread (issue 17 item 8).
MAX_PAGES = 40
COLUMNS = (
    ("text", "Text"),
    ("kind", "Kind"),
    ("scope", "Scope"),
    ("confidence", "Confidence"),
    ("valid_from", "Valid from"),
    ("valid_to", "Valid to"),
    ("status", "Status"),
    ("source", "Source"),
    ("corroborators", "Corroborators"),
)
SORT_KEYS = {1: "kind", 2: "scope", 3: "confidence", 4: "valid_from", 5: "valid_to", 6: "status"}
NOTE_ID_ROLE = Qt.ItemDataRole.UserRole + 1
DECORATION = Qt.ItemDataRole.DecorationRole
ACCESSIBLE = Qt.ItemDataRole.AccessibleTextRole
SCOPE_COLUMN = 2
NUMBER_COLUMNS = frozenset({3, 8})  # confidence, corroborators: right-aligned
SOURCE_COLUMN = 7
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
BADGE_PAD = 12  # a scope badge's width beyond its name


@dataclass(frozen=True, slots=True)
class Row:
    """A note as the table shows it, its cells formatted where it was read (off the UI
    thread), so storing a page on the UI thread only makes items."""

    note: Note
    cells: tuple[str, ...]  # one per column; the scope's is empty (it shows a badge)
    text_tip: str
    source_tip: str


Page = list[Row]


def rows_of(notes: Sequence[Note], texts: dict[NoteId, str | None]) -> Page:
    """Format notes and their texts into table rows."""
    return [_row(note, texts.get(note.id)) for note in notes]


def _row(note: Note, text: str | None) -> Row:
    cells = tuple(
        "" if column == SCOPE_COLUMN else _cell(note, key, text)
        for column, (key, _) in enumerate(COLUMNS)
    )
    sources = "\n".join(
        f"conversation {s.conversation}" + (f", turn {s.turn}" if s.turn else "")
        for s in note.sources
    )
    return Row(note, cells, f"{text or ''}\n\nid {note.id}", sources)


class NotesSource(Protocol):
    """Where the rows come from. Sources are built off the UI thread with their first page
    (notes, decrypted texts, formatted cells) ready; `load` reads any other page and runs
    there too."""

    first: Page

    def total(self) -> int: ...
    def load(self, offset: int, limit: int) -> Page: ...


class LiveSource:
    """The store's current notes, filtered and sorted in SQL.

    Built with a count and the first page (LIMIT), so the first paint costs the same for
    any store size; `load_ids` then fetches every matching id in order, after which any
    page is read by id and costs what the first did. Until then a deep page uses OFFSET.
    """

    def __init__(self, session: PersonSession, note_filter: NoteFilter) -> None:
        self.session = session
        self.filter = note_filter
        self._total, notes = memory_control.page(session, note_filter, offset=0, limit=PAGE)
        self.first: Page = rows_of(notes, memory_control.texts_of(session, notes))
        self.ids: list[NoteId] | None = None

    def load_ids(self) -> None:
        """Fetch every matching id in order (run off the UI thread)."""
        self.ids = memory_control.ordered_ids(self.session, self.filter)

    def total(self) -> int:
        return self._total

    def load(self, offset: int, limit: int) -> Page:
        ids = self.ids
        if ids is not None:
            notes = memory_control.notes_by_ids(self.session, ids[offset : offset + limit])
        else:
            notes = memory_control.page(self.session, self.filter, offset=offset, limit=limit)[1]
        return rows_of(notes, memory_control.texts_of(self.session, notes))


class ListSource:
    """A list computed elsewhere (time travel, text search): notes at hand, or pages the
    engine finds as they are asked for (control.notes.NotePages)."""

    def __init__(
        self, notes: Sequence[Note] | NotePages, session: PersonSession | None = None
    ) -> None:
        self.session = session
        self.pages = HeldPages(list(notes)) if isinstance(notes, Sequence) else notes
        self.first: Page = self.load(0, PAGE)

    def total(self) -> int:
        """The rows known now (a text search finds the rest after its first page)."""
        return self.pages.total

    def load(self, offset: int, limit: int) -> Page:
        notes = self.pages.page(offset, limit)
        texts = memory_control.texts_of(self.session, notes) if self.session else {}
        return rows_of(notes, texts)


def _cell(note: Note, key: str, text: str | None) -> str:
    if key == "text":
        return text if text is not None else "[removed with its conversation]"
    if key == "confidence":
        return f"{note.confidence_bp / 100:.0f}%"
    if key == "valid_from":
        return (iso(note.valid_from) or "")[:16].replace("T", " ")
    if key == "valid_to":
        return (iso(note.valid_to) or "open")[:16].replace("T", " ")
    if key == "source":
        first = note.sources[0] if note.sources else None
        if first is None:
            return "the person"
        more = f" (+{len(note.sources) - 1})" if len(note.sources) > 1 else ""
        return f"a conversation, {day(first.at)}{more}"
    if key == "corroborators":
        return str(len(note.corroborators)) if note.corroborators else ""
    value = getattr(note, key)
    return str(getattr(value, "value", value)).replace("_", " ")


class NotesTableModel(QStandardItemModel):
    """The notes table's rows: every row exists, but only pages someone has looked at hold
    items. Painting reads items in C++ — no Python call per cell — so a repaint costs the
    same whatever runs in the background; pages load off the UI thread (with a `loader`)
    when `request_rows` says they came into view, and fill in when they arrive.
    """

    def __init__(self, session: PersonSession | None = None) -> None:
        super().__init__(0, len(COLUMNS))
        self.setHorizontalHeaderLabels([label for _, label in COLUMNS])
        for column in NUMBER_COLUMNS:
            self.horizontalHeaderItem(column).setTextAlignment(RIGHT)
        self.session = session
        self._source: NotesSource = ListSource([])
        self.loader: Callable[[Callable[[], Page], Callable[[Page], None]], None] | None = None
        self._pages: dict[int, Page] = {}
        self._loading: set[int] = set()
        self._total = 0
        self.badges = ScopeBadges()

    # -- what the controller calls
    def set_source(self, session: PersonSession | None, source: NotesSource) -> None:
        """Show another set of rows."""
        self.beginResetModel()
        self.blockSignals(True)
        self.session = session
        self._source = source
        self._total = source.total()
        self._pages.clear()
        self._loading.clear()
        self.setRowCount(0)
        self.setRowCount(self._total)
        self._store_page(0, source.first)
        self.blockSignals(False)
        self.endResetModel()

    def showing(self, source: NotesSource) -> bool:
        """Whether the table shows `source`."""
        return source is self._source

    def grow(self, source: NotesSource, total: int) -> None:
        """`source` (if still shown) now knows more rows: add them below, keeping what is
        loaded, selected and scrolled."""
        if source is self._source and total > self._total:
            self._total = total
            self.setRowCount(total)

    def restyle(self) -> None:
        """Draw the loaded rows again in the current palette (the window's palette changed:
        badges and closed rows follow it)."""
        for number, page in list(self._pages.items()):
            self._store_page(number, page)

    def clear_rows(self) -> None:
        """Drop every row and decrypted text (locking)."""
        self.set_source(None, ListSource([]))

    def request_rows(self, first: int, last: int) -> None:
        """Rows `first`..`last` are in view: load the pages they sit on."""
        if self._total == 0:
            return
        first, last = max(0, first), min(self._total - 1, last)
        for number in range(first // PAGE, last // PAGE + 1):
            if number not in self._pages:
                self._fetch(number)

    def note_at(self, row: int) -> Note | None:
        """The note on a row; None while its page is not loaded."""
        if not 0 <= row < self._total:
            return None
        page = self._pages.get(row // PAGE)
        if page is None:
            if self.loader is not None:
                return None
            page = self._fetch(row // PAGE)
            if page is None:
                return None
        offset = row % PAGE
        return page[offset].note if offset < len(page) else None

    def _fetch(self, number: int) -> Page | None:
        source = self._source
        if self.loader is None:
            return self._store_page(number, source.load(number * PAGE, PAGE))
        if number not in self._loading:
            self._loading.add(number)

            def arrived(loaded: Page) -> None:
                if self._source is source:  # else the table shows something else by now
                    self._store_in_pieces(number, loaded, source, 0)

            self.loader(lambda: source.load(number * PAGE, PAGE), arrived)
        return None

    def _store_in_pieces(self, number: int, page: Page, source: NotesSource, start: int) -> None:
        """Make a page that arrived into items STORE_ROWS rows at a time, each piece in a
        turn of the event loop of its own: a whole page at once held the UI thread for
        60–120 ms while verify ran beside it (each item call waits for the interpreter;
        issue 17 item 8). The page counts as loaded once its last piece is in."""
        if self._source is not source:
            return  # the table shows something else by now
        end = min(len(page), start + STORE_ROWS)
        self._store_rows(number, page, start, end)
        if end < len(page):
            QTimer.singleShot(0, self, lambda: self._store_in_pieces(number, page, source, end))
        else:
            self._loading.discard(number)
            self._pages[number] = page
            self._evict()

    def _store_page(self, number: int, page: Page) -> Page:
        self._pages[number] = page
        self._store_rows(number, page, 0, len(page))
        self._evict()
        return page

    def _evict(self) -> None:
        """Drop the items of the pages stored longest ago beyond MAX_PAGES (they load
        again if they come back into view)."""
        while len(self._pages) > MAX_PAGES:
            number = next(iter(self._pages))
            page = self._pages.pop(number)
            first = number * PAGE
            blocked = self.blockSignals(True)
            for row in range(first, min(self._total, first + len(page))):
                for column in range(len(COLUMNS)):
                    self.takeItem(row, column)
            self.blockSignals(blocked)

    def _store_rows(self, number: int, page: Page, start: int, end: int) -> None:
        """Items for rows `start`..`end` - 1 of page `number`, and one change signal."""
        closed = theme.closed_color()
        badges = {scope: self.badges.icon(scope) for scope in Scope}
        scope_tips = {scope: f"{scope.value}: {theme.SCOPE_MEANING[scope]}" for scope in Scope}
        # One change signal for the page, not one per cell; the view edits nothing, so the
        # items need no flags of their own.
        blocked = self.blockSignals(True)
        for offset in range(start, end):
            entry = page[offset]
            row = number * PAGE + offset
            if row >= self._total:
                break
            note = entry.note
            items = [QStandardItem(cell) for cell in entry.cells]
            items[0].setToolTip(entry.text_tip)
            items[0].setData(note.id, NOTE_ID_ROLE)
            badge = items[SCOPE_COLUMN]  # its picture, and its name for screen readers
            badge.setData(badges[note.scope], DECORATION)
            badge.setData(note.scope.value, ACCESSIBLE)
            badge.setToolTip(scope_tips[note.scope])
            for column in NUMBER_COLUMNS:
                items[column].setTextAlignment(RIGHT)
            if entry.source_tip:
                items[SOURCE_COLUMN].setToolTip(entry.source_tip)
            dim = theme.status_is_closed(note.status)
            for column, item in enumerate(items):
                if dim:
                    item.setForeground(closed)
                self.setItem(row, column, item)
        self.blockSignals(blocked)
        first, last = number * PAGE + start, min(self._total, number * PAGE + end) - 1
        if last >= first and not blocked:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(COLUMNS) - 1))

    def row_of(self, note_id: str) -> int | None:
        """The row of a note among pages already loaded."""
        for number, page in self._pages.items():
            for offset, entry in enumerate(page):
                if entry.note.id == note_id:
                    return number * PAGE + offset
        return None


def watch_visible_rows(view: QTableView, model: NotesTableModel) -> None:
    """Tell the model which rows a view shows whenever it scrolls, resizes or resets."""

    def visible() -> None:
        top = max(0, view.rowAt(0))
        bottom = view.rowAt(max(0, view.viewport().height() - 1))
        if bottom < 0:
            bottom = top + max(1, view.viewport().height() // 20)
        model.request_rows(top, bottom)

    view.verticalScrollBar().valueChanged.connect(lambda _v: visible())
    view.verticalScrollBar().rangeChanged.connect(lambda _a, _b: visible())
    model.modelReset.connect(visible)


class ScopeBadges:
    """Each scope drawn once as a coloured badge with its name (per palette, font and pixel
    ratio), then shown as the scope cell's icon. The table paints icons in C++: a Python
    delegate would be called for every cell on every repaint, and each call waits for the
    interpreter while a page loads in the background."""

    def __init__(self) -> None:
        self._badges: dict[tuple[Scope, bool, str, float], QIcon] = {}

    def icon(self, scope: Scope) -> QIcon:
        """The badge of `scope` in the application's palette and font; the same picture
        when its row is selected (a selected icon is otherwise tinted)."""
        font = QGuiApplication.font()
        dark = theme.is_dark()
        app = QGuiApplication.instance()
        ratio = app.devicePixelRatio() if isinstance(app, QGuiApplication) else 1.0
        key = (scope, dark, font.key(), ratio)
        icon = self._badges.get(key)
        if icon is None:
            badge = _draw_badge(scope, dark, font, ratio)
            icon = QIcon()
            for mode in (QIcon.Mode.Normal, QIcon.Mode.Selected):
                icon.addPixmap(badge, mode)
            self._badges[key] = icon
        return icon

    def extent(self) -> QSize:
        """Room for the widest badge: the table's icon size (icons are never enlarged)."""
        metrics = QFontMetrics(QGuiApplication.font())
        width = max(metrics.horizontalAdvance(scope.value) for scope in Scope)
        return QSize(width + BADGE_PAD, metrics.height() + 2)


def _draw_badge(scope: Scope, dark: bool, font: QFont, ratio: float) -> QPixmap:
    metrics = QFontMetrics(font)
    text = scope.value
    size = QSize(metrics.horizontalAdvance(text) + BADGE_PAD, metrics.height() + 2)
    badge = QPixmap(size * ratio)
    badge.setDevicePixelRatio(ratio)
    badge.fill(Qt.GlobalColor.transparent)
    painter = QPainter(badge)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setFont(font)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(theme.scope_color(scope, dark))
    painter.drawRoundedRect(QRect(QPoint(0, 0), size), 7, 7)
    painter.setPen(theme.badge_text_color(scope, dark))
    painter.drawText(QRect(QPoint(0, 0), size), Qt.AlignmentFlag.AlignCenter, text)
    painter.end()
    return badge
