"""The notes table: an id-based lazy model (Anki's browser table).

The model holds a total and fetches rows a page at a time from a NotesSource, decrypting
only the page it shows; sorting and field filters happen in SQL (control.notes.page),
text search and time travel produce a list of notes off the UI thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QPainter, QPalette
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


class NotesSource(Protocol):
    """Where the rows come from."""

    def total(self) -> int: ...
    def notes(self, offset: int, limit: int) -> Sequence[Note]: ...


class LiveSource:
    """The store's current notes, filtered and sorted in SQL.

    Built off the UI thread with a count and the first page (LIMIT), so the first paint
    costs the same for any store size; `load_ids` then fetches every matching id in order
    (also off the UI thread), after which any page is read by id and costs what the first
    did. Until then a deep page falls back to OFFSET.
    """

    def __init__(self, session: PersonSession, note_filter: NoteFilter) -> None:
        self.session = session
        self.filter = note_filter
        self._total, self._first = memory_control.page(session, note_filter, offset=0, limit=PAGE)
        self.ids: list[NoteId] | None = None

    def load_ids(self) -> None:
        """Fetch every matching id in order (run off the UI thread)."""
        self.ids = memory_control.ordered_ids(self.session, self.filter)

    def total(self) -> int:
        return self._total

    def notes(self, offset: int, limit: int) -> Sequence[Note]:
        if offset == 0 and limit <= len(self._first):
            return self._first[:limit]
        ids = self.ids
        if ids is not None:
            return memory_control.notes_by_ids(self.session, ids[offset : offset + limit])
        return memory_control.page(self.session, self.filter, offset=offset, limit=limit)[1]


class ListSource:
    """A list computed elsewhere (time travel, text search)."""

    def __init__(self, notes: Sequence[Note]) -> None:
        self._items = list(notes)

    def total(self) -> int:
        return len(self._items)

    def notes(self, offset: int, limit: int) -> Sequence[Note]:
        return self._items[offset : offset + limit]


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


class NotesTableModel(QAbstractTableModel):
    """Rows fetched on demand into a page cache; text decrypted a page at a time."""

    def __init__(self, session: PersonSession | None = None) -> None:
        super().__init__()
        self.session = session
        self._source: NotesSource = ListSource([])
        self._total = 0
        self._pages: dict[int, list[Note]] = {}
        self._texts: dict[NoteId, str | None] = {}

    # -- what the controller calls
    def set_source(self, session: PersonSession | None, source: NotesSource) -> None:
        """Show another set of rows."""
        self.beginResetModel()
        self.session = session
        self._source = source
        self._total = source.total()
        self._pages.clear()
        self._texts.clear()
        self.endResetModel()

    def clear(self) -> None:
        """Drop every row and decrypted text (locking)."""
        self.set_source(None, ListSource([]))

    def note_at(self, row: int) -> Note | None:
        """The note on a row, fetching its page if needed."""
        if not 0 <= row < self._total:
            return None
        page_number = row // PAGE
        page = self._pages.get(page_number)
        if page is None:
            page = list(self._source.notes(page_number * PAGE, PAGE))
            self._pages[page_number] = page
            if self.session is not None:
                self._texts.update(memory_control.texts_of(self.session, page))
        offset = row - page_number * PAGE
        return page[offset] if offset < len(page) else None

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
            return None
        key = COLUMNS[index.column()][0]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return _cell(note, key, self._texts.get(note.id))
        if role == Qt.ItemDataRole.ToolTipRole:
            if key == "scope":
                return theme.SCOPE_MEANING[note.scope]
            return self._texts.get(note.id) if key == "text" else None
        if role == Qt.ItemDataRole.ForegroundRole and theme.status_is_closed(note.status):
            return theme.closed_color()
        if role == NOTE_ID_ROLE:
            return note.id
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


class ScopeBadgeDelegate(QStyledItemDelegate):
    """Draws the scope as a coloured badge with its name."""

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
        scope = Scope(text)
        dark = option.palette.color(QPalette.ColorRole.Base).lightness() < 128
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        metrics = option.fontMetrics
        width = metrics.horizontalAdvance(text) + 14
        rect: QRect = option.rect
        badge = QRect(
            rect.left() + 4,
            rect.center().y() - metrics.height() // 2 - 1,
            width,
            metrics.height() + 2,
        )
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(theme.scope_color(scope, dark))
        painter.drawRoundedRect(badge, 7, 7)
        painter.setPen(theme.badge_text_color(scope, dark))
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()
