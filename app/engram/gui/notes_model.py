"""The notes table: an id-based lazy model (Anki's browser table).

The model holds a total and fetches rows a page at a time from a NotesSource, decrypting
only the page it shows; sorting and field filters happen in SQL (control.notes.page),
text search and time travel produce a list of notes off the UI thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
)
from PySide6.QtGui import QPainter, QPalette, QPixmap
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.gui import theme
from engram.model.clock import iso
from engram.model.ids import NoteId
from engram.model.notes import Note, NoteFilter
from engram.model.scope import Scope

PAGE = 50
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
SCOPE_COLUMN = 2

Index = QModelIndex | QPersistentModelIndex
# The roles the table answers; every other role returns at once, before any row is read.
_ROLES = frozenset(
    int(role)
    for role in (
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.AccessibleTextRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.ForegroundRole,
        NOTE_ID_ROLE,
    )
)


Page = tuple[list[Note], dict[NoteId, str | None]]


class NotesSource(Protocol):
    """Where the rows come from. Sources are built off the UI thread with their first page
    (notes and decrypted texts) ready; `load` reads any other page and runs there too."""

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
        self.first: Page = (notes, memory_control.texts_of(session, notes))
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
        return notes, memory_control.texts_of(self.session, notes)


class ListSource:
    """A list computed elsewhere (time travel, text search)."""

    def __init__(self, notes: Sequence[Note], session: PersonSession | None = None) -> None:
        self.session = session
        self._items = list(notes)
        self.first: Page = self.load(0, PAGE)

    def total(self) -> int:
        return len(self._items)

    def load(self, offset: int, limit: int) -> Page:
        notes = self._items[offset : offset + limit]
        texts = memory_control.texts_of(self.session, notes) if self.session else {}
        return notes, texts


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
        return f"{first.conversation} · {first.turn}" if first.turn else first.conversation
    if key == "corroborators":
        return str(len(note.corroborators)) if note.corroborators else ""
    value = getattr(note, key)
    return str(getattr(value, "value", value)).replace("_", " ")


_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


class NotesTableModel(QAbstractTableModel):
    """Rows fetched on demand into a page cache; text decrypted a page at a time.

    With a `loader` (the inspector's background runner) a page not yet fetched shows a
    placeholder while it loads off the UI thread, then its rows repaint; without one (tests,
    scripts) pages load in place.
    """

    def __init__(self, session: PersonSession | None = None) -> None:
        super().__init__()
        self.session = session
        self._source: NotesSource = ListSource([])
        self.loader: Callable[[Callable[[], Page], Callable[[Page], None]], None] | None = None
        self._loading: set[int] = set()
        self._total = 0
        self._pages: dict[int, list[Note]] = {}
        self._texts: dict[NoteId, str | None] = {}
        self._cells: dict[NoteId, tuple[str, ...]] = {}
        self._closed = theme.closed_color()

    # -- what the controller calls
    def set_source(self, session: PersonSession | None, source: NotesSource) -> None:
        """Show another set of rows."""
        self.beginResetModel()
        self.session = session
        self._source = source
        self._total = source.total()
        self._pages.clear()
        self._texts.clear()
        self._cells.clear()
        self._loading.clear()
        self._closed = theme.closed_color()
        self._store_page(0, source.first)
        self.endResetModel()

    def clear(self) -> None:
        """Drop every row and decrypted text (locking)."""
        self.set_source(None, ListSource([]))

    def note_at(self, row: int) -> Note | None:
        """The note on a row; None while its page is still loading."""
        if not 0 <= row < self._total:
            return None
        number = row // PAGE
        page = self._pages.get(number)
        if page is None:
            page = self._fetch(number)
            if page is None:
                return None
        offset = row - number * PAGE
        return page[offset] if offset < len(page) else None

    def _fetch(self, number: int) -> list[Note] | None:
        source = self._source
        if self.loader is None:
            return self._store_page(number, source.load(number * PAGE, PAGE))
        if number not in self._loading:
            self._loading.add(number)

            def arrived(loaded: Page) -> None:
                if self._source is not source:
                    return  # the table shows something else by now
                self._loading.discard(number)
                self._store_page(number, loaded)
                last = min(self._total, (number + 1) * PAGE) - 1
                self.dataChanged.emit(
                    self.index(number * PAGE, 0), self.index(last, len(COLUMNS) - 1)
                )

            self.loader(lambda: source.load(number * PAGE, PAGE), arrived)
        return None

    def _store_page(self, number: int, loaded: Page) -> list[Note]:
        notes, texts = loaded
        self._pages[number] = list(notes)
        self._texts.update(texts)
        return self._pages[number]

    def text_of(self, note: Note) -> str | None:
        """The decrypted text of a note on a fetched page."""
        return self._texts.get(note.id)

    def row_of(self, note_id: str) -> int | None:
        """The row of a note among pages already fetched."""
        for number, page in self._pages.items():
            for offset, note in enumerate(page):
                if note.id == note_id:
                    return number * PAGE + offset
        return None

    # -- Qt
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._total

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][1]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if int(role) not in _ROLES or not index.isValid():
            return None
        note = self.note_at(index.row())
        if note is None:
            loading = role == Qt.ItemDataRole.DisplayRole and index.column() == 0
            return "…" if loading else None
        column = index.column()
        key = COLUMNS[column][0]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            cells = self._cells.get(note.id)
            if cells is None:  # formatted once per row, then every repaint reads it
                text = self._texts.get(note.id)
                cells = tuple(_cell(note, name, text) for name, _ in COLUMNS)
                self._cells[note.id] = cells
            return cells[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            if key == "scope":
                return theme.SCOPE_MEANING[note.scope]
            return self._texts.get(note.id) if key == "text" else None
        if role == Qt.ItemDataRole.ForegroundRole and theme.status_is_closed(note.status):
            return self._closed
        if role == NOTE_ID_ROLE:
            return note.id
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        return _FLAGS


class ScopeBadgeDelegate(QStyledItemDelegate):
    """Draws the scope as a coloured badge with its name (each badge drawn once, then
    copied: a table repaints many rows, and painting from Python is slow)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._badges: dict[tuple[str, bool, int, str], QPixmap] = {}

    def _badge(self, text: str, dark: bool, option: QStyleOptionViewItem) -> QPixmap:
        metrics = option.fontMetrics
        key = (text, dark, metrics.height(), option.font.key())
        badge = self._badges.get(key)
        if badge is None:
            scope = Scope(text)
            ratio = option.widget.devicePixelRatioF() if option.widget else 1.0
            size = QSize(metrics.horizontalAdvance(text) + 14, metrics.height() + 2)
            badge = QPixmap(size * ratio)
            badge.setDevicePixelRatio(ratio)
            badge.fill(Qt.GlobalColor.transparent)
            painter = QPainter(badge)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setFont(option.font)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(theme.scope_color(scope, dark))
            painter.drawRoundedRect(QRect(QPoint(0, 0), size), 7, 7)
            painter.setPen(theme.badge_text_color(scope, dark))
            painter.drawText(QRect(QPoint(0, 0), size), Qt.AlignmentFlag.AlignCenter, text)
            painter.end()
            self._badges[key] = badge
        return badge

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        if not text:
            super().paint(painter, option, index)
            return
        style = option.widget.style() if option.widget else None
        if style is not None:
            style.drawPrimitive(
                QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, option.widget
            )
        dark = option.palette.color(QPalette.ColorRole.Base).lightness() < 128
        badge = self._badge(text, dark, option)
        rect: QRect = option.rect
        top = rect.center().y() - round(badge.deviceIndependentSize().height()) // 2
        painter.drawPixmap(QPoint(rect.left() + 4, top), badge)
