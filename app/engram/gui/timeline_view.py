"""Validity intervals as bars over time: coloured by scope, closed ones visibly ended."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QToolTip, QWidget

from engram.gui import theme
from engram.model.clock import iso
from engram.model.notes import Note
from engram.model.scope import Scope

ROW = 22
LABEL = 260
AXIS = 28
MARGIN = 12
TICK_DAYS = (1, 2, 7, 14, 28, 56, 91, 182, 364, 728)  # the axis' steps, finest that fits


@dataclass(frozen=True, slots=True)
class TimelineRow:
    """One bar: a note and the words to show beside it."""

    note: Note
    label: str


class TimelineView(QWidget):
    """Paints one row per note; clicking a bar selects the note, and so do the arrow keys
    once the timeline has the focus. Hovering a bar says which note it is and when it held."""

    note_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Timeline of validity intervals")
        self.setToolTip("Each bar is a note's validity; ↑ ↓ choose a note, Home and End jump")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self._rows: list[TimelineRow] = []
        self._now = datetime.now(UTC)
        self._start = self._now - timedelta(days=30)
        self._selected: str | None = None
        self.setMinimumHeight(AXIS + ROW * 3)

    def set_rows(self, rows: Sequence[TimelineRow], now: datetime) -> None:
        """Show these intervals, with `now` as the right edge for open ones."""
        self._rows = list(rows)
        self._now = now
        starts = [r.note.valid_from for r in rows]
        self._start = min(starts) if starts else now - timedelta(days=30)
        if self._now - self._start < timedelta(days=1):
            self._start = self._now - timedelta(days=1)
        self.setMinimumHeight(AXIS + ROW * max(3, len(rows)) + MARGIN)
        self.updateGeometry()
        self.update()

    def clear(self) -> None:
        """Show nothing (locking, another person)."""
        self.set_rows([], self._now)

    def select(self, note_id: str | None) -> None:
        """Outline a note's bar."""
        self._selected = note_id
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(900, AXIS + ROW * max(3, len(self._rows)) + MARGIN)

    def _x(self, moment: datetime) -> float:
        span = (self._now - self._start).total_seconds() or 1.0
        width = max(40, self.width() - LABEL - 2 * MARGIN)
        return LABEL + MARGIN + width * (moment - self._start).total_seconds() / span

    def bar_rect(self, index: int) -> QRectF:
        """Where row `index`'s bar is drawn (tests click it)."""
        note = self._rows[index].note
        left = self._x(note.valid_from)
        right = self._x(note.valid_to or self._now)
        top = AXIS + index * ROW + 4
        return QRectF(left, top, max(4.0, right - left), ROW - 8)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            self._paint(painter)
        finally:
            painter.end()  # here, on the UI thread: never left to whoever drops the frame

    def _paint(self, painter: QPainter) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.color(QPalette.ColorRole.Base))
        text_color = palette.color(QPalette.ColorRole.Text)
        grid = QColor(text_color)
        grid.setAlpha(40)
        self._axis(painter, text_color, grid)
        if not self._rows:
            painter.setPen(text_color)
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No notes to show.")
            return
        metrics = painter.fontMetrics()
        for index, row in enumerate(self._rows):
            note = row.note
            rect = self.bar_rect(index)
            closed = theme.status_is_closed(note.status)
            color = theme.scope_color(note.scope)
            if closed:
                color.setAlpha(110)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(color)
            painter.drawRoundedRect(rect, 4, 4)
            if closed:
                # A closed interval ends in a hard stop the eye can find.
                painter.setPen(QPen(text_color, 2))
                painter.drawLine(
                    QPointF(rect.right(), rect.top() - 2), QPointF(rect.right(), rect.bottom() + 2)
                )
            if note.id == self._selected:
                painter.setPen(QPen(palette.color(QPalette.ColorRole.Highlight), 2))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRoundedRect(rect.adjusted(-2, -2, 2, 2), 5, 5)
            painter.setPen(theme.closed_color() if closed else text_color)
            label = metrics.elidedText(row.label, Qt.TextElideMode.ElideRight, LABEL - 8)
            painter.drawText(
                QRectF(MARGIN, rect.top() - 3, LABEL - 4, ROW),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                label,
            )

    def axis_ticks(self) -> list[tuple[float, str | None]]:
        """Where the axis has a grid line, and its date where one fits: ticks are spaced
        so that no two dates touch, and a date that would run past the edge is left out."""
        metrics = self.fontMetrics()
        room = metrics.horizontalAdvance("30 Sep") + 12
        per_day = (self._x(self._start + timedelta(days=1)) - self._x(self._start)) or 1.0
        days = next((d for d in TICK_DAYS if d * per_day >= room), TICK_DAYS[-1])
        step = timedelta(days=days)
        tick = self._start.replace(hour=0, minute=0, second=0, microsecond=0) + step
        ticks: list[tuple[float, str | None]] = []
        while tick < self._now:
            x = self._x(tick)
            label = tick.strftime("%d %b")
            fits = x + 3 + metrics.horizontalAdvance(label) <= self.width() - 2
            ticks.append((x, label if fits else None))
            tick += step
        return ticks

    def _axis(self, painter: QPainter, text_color: QColor, grid: QColor) -> None:
        for x, label in self.axis_ticks():
            painter.setPen(grid)
            painter.drawLine(QPointF(x, AXIS - 4), QPointF(x, self.height()))
            if label is not None:
                painter.setPen(text_color)
                painter.drawText(QPointF(x + 3, AXIS - 10), label)
        painter.setPen(QPen(text_color, 1, Qt.PenStyle.DashLine))
        now_x = self._x(self._now)
        painter.drawLine(QPointF(now_x, AXIS - 4), QPointF(now_x, self.height()))

    def row_at(self, point: QPointF | QPoint) -> int | None:
        """The row under a point (its bar, or its band across the view)."""
        point = QPointF(point)
        for index in range(len(self._rows)):
            rect = self.bar_rect(index)
            band = QRectF(0, rect.top() - 4, self.width(), ROW)
            if rect.adjusted(-3, -3, 3, 3).contains(point) or band.contains(point):
                return index
        return None

    def tooltip_for(self, index: int) -> str:
        """What hovering row `index` says: the note, its scope and when it held."""
        note = self._rows[index].note
        start = (iso(note.valid_from) or "")[:16].replace("T", " ")
        end = (iso(note.valid_to) or "now")[:16].replace("T", " ")
        return (
            f"{self._rows[index].label}\n{note.scope.value} · {note.status.value.replace('_', ' ')}"
            f" · {start} → {end}"
        )

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            index = self.row_at(event.pos())
            if index is None:
                QToolTip.showText(event.globalPos(), self.toolTip(), self)
            else:
                QToolTip.showText(event.globalPos(), self.tooltip_for(index), self)
            return True
        return super().event(event)

    def _choose(self, index: int) -> None:
        note = self._rows[index].note
        self.select(note.id)
        self.note_clicked.emit(note.id)
        top = int(self.bar_rect(index).top())
        parent = self.parentWidget()
        scroller = parent.parentWidget() if parent is not None else None
        ensure = getattr(scroller, "ensureVisible", None)
        if ensure is not None:
            ensure(0, top, 0, ROW)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if not self._rows:
            super().keyPressEvent(event)
            return
        ids: list[str] = [r.note.id for r in self._rows]
        current = ids.index(self._selected) if self._selected in ids else -1
        moves = {
            Qt.Key.Key_Down: current + 1,
            Qt.Key.Key_Up: max(0, current - 1),
            Qt.Key.Key_Home: 0,
            Qt.Key.Key_End: len(ids) - 1,
            Qt.Key.Key_PageDown: current + 10,
            Qt.Key.Key_PageUp: max(0, current - 10),
        }
        target = moves.get(Qt.Key(event.key()))
        if target is None:
            super().keyPressEvent(event)
            return
        self._choose(min(max(0, target), len(ids) - 1))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        index = self.row_at(event.position())
        if index is not None:
            self.setFocus(Qt.FocusReason.MouseFocusReason)
            self._choose(index)
            return
        super().mousePressEvent(event)


class TimelineLegend(QWidget):
    """What the timeline's colours and marks mean."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Timeline legend")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        for scope in Scope:
            color = theme.scope_color(scope).name()
            swatch = QLabel(
                f"<span style='background:{color}'>&nbsp;&nbsp;&nbsp;&nbsp;</span> {scope.value}"
            )
            swatch.setToolTip(theme.SCOPE_MEANING[scope])
            layout.addWidget(swatch)
        closed = QLabel("▌ a hard stop: the note closed · faded: no longer held · dashed: now")
        closed.setWordWrap(True)
        layout.addWidget(closed, 1)


class TimelinePager(QWidget):
    """Which notes the timeline shows, and Older / Newer to page through all of them
    (issue 21 item 5): a page of the newest first, then back, as the notes table pages."""

    older_requested = Signal()
    newer_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 0)
        self.newer_button = QPushButton("Ne&wer notes")
        self.newer_button.setAccessibleName("Show the newer notes on the timeline")
        self.older_button = QPushButton("&Older notes")
        self.older_button.setAccessibleName("Show the older notes on the timeline")
        self.span = QLabel("")
        self.span.setAccessibleName("Which notes the timeline shows")
        layout.addWidget(self.span, 1)
        layout.addWidget(self.newer_button)
        layout.addWidget(self.older_button)
        self.newer_button.clicked.connect(self.newer_requested.emit)
        self.older_button.clicked.connect(self.older_requested.emit)
        self.show_span(0, 0, 0)

    def show_span(self, offset: int, shown: int, total: int) -> None:
        """Say which notes are shown (`offset` from the newest) and offer the way on."""
        if total == 0:
            self.span.setText("")
        elif shown >= total:
            self.span.setText(f"All {total:,} notes, in the order they were made.")
        else:
            newest = offset + 1
            self.span.setText(
                f"Notes {newest:,}–{offset + shown:,} of {total:,}, counted from the newest."
            )
        self.newer_button.setEnabled(offset > 0)
        self.older_button.setEnabled(offset + shown < total)
