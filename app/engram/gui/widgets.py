"""Small layout helpers shared by the panels: a name and a tooltip for every control, Esc
that clears a search field, a label that never widens the window, "Copy id", and `offer`
(a store-changing control, off with its reason while time travel shows the past)."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QSettings,
    QSize,
    Qt,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QAction,
    QGuiApplication,
    QKeySequence,
    QPainter,
    QPaintEvent,
    QPalette,
    QShortcut,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QSizePolicy,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTabBar,
    QTextEdit,
    QWidget,
)

MAX_LABEL = 360  # an elided label's widest

# Time travel is read-only everywhere (issue 17 item 3): what every store-changing control
# says, disabled, while "As of" shows the past.
PAST_REASON = "Time travel shows the past; return to now to change anything."
# A store whose file or folder cannot be written is open read-only (issue 17 item 12): the
# same controls are off, with this reason.
READ_ONLY_REASON = (
    "This store is open read-only (its file or folder cannot be written); copy it to a folder "
    "you can write to, to change anything."
)
FROZEN_REASONS = (PAST_REASON, READ_ONLY_REASON)
_OWN_TIP = "engram_own_tip"

INTERACTIVE: tuple[type[QWidget], ...] = (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTabBar,
    QTextEdit,
)


def describe(widget: QWidget, name: str, tip: str | None = None) -> None:
    """Give a control its accessible name and a tooltip (the name, unless said otherwise)."""
    widget.setAccessibleName(name)
    widget.setToolTip(tip or name)


def offer(
    control: QAction | QWidget, enabled: bool, past: bool | str, tip: str | None = None
) -> None:
    """Enable a control that changes the store when `enabled`, and never in the `past` (or
    while `past` is a reason nothing may change, such as READ_ONLY_REASON): there it is off
    and its tooltip says why. `tip` is its tooltip otherwise (by default the one it had
    when first offered)."""
    if tip is None:
        own = control.property(_OWN_TIP)
        if not own:  # not known yet: the tooltip it has (or would get from its name)
            own = control.toolTip()
            if any(reason in own for reason in FROZEN_REASONS):
                own = ""
            if not own and isinstance(control, QWidget):
                own = control.accessibleName()
            control.setProperty(_OWN_TIP, own)
        tip = str(own)
    control.setEnabled(enabled and not past)
    if past:
        reason = past if isinstance(past, str) else PAST_REASON
        control.setToolTip(f"{tip} — {reason}" if tip else reason)
    else:
        control.setToolTip(tip)


def is_interactive(widget: QWidget) -> bool:
    """A control someone can reach: a button, field, list or the like, or anything that
    takes the keyboard's focus on its own (the timeline) — not the parts a control is made
    of (a combo box's popup list, a spin box's line edit, a scroll area's scroll bars)."""
    own = isinstance(widget, INTERACTIVE) or (
        widget.focusPolicy() & Qt.FocusPolicy.TabFocus
        and type(widget).__module__.startswith("engram")
    )
    if not own:
        return False
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, (QComboBox, QAbstractSpinBox, QLineEdit, QAbstractItemView)):
            return False  # a part of that control (its popup, its field, its header)
        parent = parent.parentWidget()
    if widget.objectName().startswith("qt_"):
        return False  # Qt's own parts: the menu bar's overflow button, a dialog's internals
    return not widget.inherits("QLineEditIconButton")  # the clear button of a search field


def undescribed(root: QWidget) -> list[str]:
    """The interactive widgets under `root` that lack an accessible name or a tooltip."""
    missing = []
    for widget in root.findChildren(QWidget):
        if is_interactive(widget) and not (widget.accessibleName() and widget.toolTip()):
            text = getattr(widget, "text", lambda: "")()
            missing.append(f"{type(widget).__name__} {widget.objectName()!r} {text!r}")
    return missing


def tip_from_name(root: QWidget) -> None:
    """Every named control without a tooltip of its own shows its accessible name."""
    for widget in root.findChildren(QWidget):
        if is_interactive(widget) and widget.accessibleName() and not widget.toolTip():
            widget.setToolTip(widget.accessibleName())


def clear_on_escape(field: QLineEdit, also: Callable[[], None] | None = None) -> QShortcut:
    """Esc in a search field empties it (and does `also`, e.g. hide the results)."""
    shortcut = QShortcut(QKeySequence(Qt.Key.Key_Escape), field)
    shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)

    def cleared() -> None:
        field.clear()
        if also is not None:
            also()

    shortcut.activated.connect(cleared)
    return shortcut


def copy_id_menu(view: QAbstractItemView, id_at: Callable[[QPoint], str | None]) -> None:
    """A context menu with "Copy id" for whatever is under the pointer."""
    view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def menu(point: QPoint) -> None:
        found = id_at(point)
        if not found:
            return
        popup = QMenu(view)
        action = popup.addAction("Copy id")
        action.setToolTip(found)
        action.triggered.connect(lambda: copy_text(found))
        popup.popup(view.viewport().mapToGlobal(point))

    view.customContextMenuRequested.connect(menu)


def copy_text(text: str) -> None:
    """Put text on the clipboard."""
    clipboard = QGuiApplication.clipboard()
    if clipboard is not None:
        clipboard.setText(text)


class ElidedLabel(QLabel):
    """A one-line label that shortens its text with "…" instead of widening the window;
    the whole text is in its tooltip."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(min(hint.width(), MAX_LABEL), hint.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(24, super().minimumSizeHint().height())

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        shown = self.fontMetrics().elidedText(
            self.text(), Qt.TextElideMode.ElideMiddle, self.width()
        )
        painter.drawText(self.rect(), int(self.alignment()), shown)
        painter.end()  # here, on the UI thread: never left to whoever drops the frame


class ColumnChooser(QObject):
    """The header's context menu shows or hides columns; the choice is kept in QSettings
    under `key` (Anki's browser does the same). Columns in `fixed` cannot be hidden; those
    in `hidden_first` start hidden until someone chooses."""

    def __init__(
        self,
        header: QHeaderView,
        settings: QSettings,
        key: str,
        fixed: frozenset[int],
        hidden_first: tuple[int, ...] = (),
    ) -> None:
        super().__init__(header)
        self.header = header
        self.settings = settings
        self.key = key
        self.fixed = fixed
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._menu)
        hidden = settings.value(key, None)
        for column in _columns(hidden) if hidden is not None else hidden_first:
            if column not in fixed and 0 <= column < header.count():
                header.setSectionHidden(column, True)

    def menu(self) -> QMenu:
        """The menu the header shows: one checkable entry per column."""
        popup = QMenu(self.header)
        model = self.header.model()
        for column in range(self.header.count()):
            label = str(model.headerData(column, Qt.Orientation.Horizontal) or column)
            action = popup.addAction(label)
            action.setCheckable(True)
            action.setChecked(not self.header.isSectionHidden(column))
            action.setEnabled(column not in self.fixed)
            action.toggled.connect(lambda shown, c=column: self.show_column(c, shown))
        return popup

    def _menu(self, point: QPoint) -> None:
        self.menu().popup(self.header.mapToGlobal(point))

    def show_column(self, column: int, shown: bool) -> None:
        """Show or hide a column, and remember it."""
        if column in self.fixed:
            return
        self.header.setSectionHidden(column, not shown)
        hidden = [c for c in range(self.header.count()) if self.header.isSectionHidden(c)]
        self.settings.setValue(self.key, [str(c) for c in hidden] or ["none"])
        self.settings.sync()


def _columns(value: object) -> list[int]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [int(v) for v in value if str(v).isdigit()]


HTML_ROLE = Qt.ItemDataRole.UserRole + 20


class HtmlDelegate(QStyledItemDelegate):
    """Paints a list item's HTML_ROLE (marked search matches); the plain text stays its
    display text, which screen readers and keyboard search use."""

    def _document(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QTextDocument:
        document = QTextDocument()
        document.setDefaultFont(option.font)
        document.setHtml(str(index.data(HTML_ROLE) or html.escape(str(index.data() or ""))))
        document.setTextWidth(max(60, option.rect.width() - 8))
        return document

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        if index.data(HTML_ROLE) is None:
            super().paint(painter, option, index)
            return
        self.initStyleOption(option, index)
        style = option.widget.style() if option.widget else None
        option.text = ""
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, option.widget)
        document = self._document(option, index)
        painter.save()
        painter.translate(option.rect.topLeft() + QPoint(4, 1))
        context = QAbstractTextDocumentLayout.PaintContext()
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        context.palette.setColor(QPalette.ColorRole.Text, option.palette.color(role))
        document.documentLayout().draw(painter, context)
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        if index.data(HTML_ROLE) is None:
            return super().sizeHint(option, index)
        document = self._document(option, index)
        return QSize(int(document.idealWidth()) + 8, int(document.size().height()) + 2)
