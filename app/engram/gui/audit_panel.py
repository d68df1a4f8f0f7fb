"""The person's journal as a readable log, and the integrity check with progress."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from engram.control.wording import actor_named, counted, day

COLUMNS = ("When", "Actor", "Action", "Cause")
Index = QModelIndex | QPersistentModelIndex


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
    return f"entry {row['seq']} by {row['actor']}: {row['action']}" + (
        f"\ncause: {ids}" if ids else ""
    )


class AuditModel(QAbstractTableModel):
    """Journal rows, formatted only when a cell is painted."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, Any]] = []

    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        """Show these rows."""
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return _cells(self.rows[index.row()])[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return _tooltip(self.rows[index.row()])
        return None


class AuditPanel(QWidget):
    """Time, actor, action, cause — newest last, as the journal keeps them."""

    verify_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.span = QLabel("")
        layout.addWidget(self.span)
        self.model = AuditModel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setAccessibleName("Audit log")
        self.table.setToolTip("Every change to this person's memory: when, who, what, and why")
        self.table.setTabKeyNavigation(False)  # Tab leaves the table
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(0, 150)  # fixed widths: sizing to contents reads every row
        header.resizeSection(1, 130)
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        self.verify_button = QPushButton("&Verify integrity")
        self.verify_button.setAccessibleName("Verify the store's integrity")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setAccessibleName("Stop the integrity check")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setAccessibleName("Verify progress")
        self.result = QLabel("Not checked yet.")
        self.result.setWordWrap(True)
        # Offered once verify found a copy without its checkpoint (issue 17 item 12).
        self.reanchor_button = QPushButton("Re-anchor this c&opy…")
        self.reanchor_button.setAccessibleName("Re-anchor this copy")
        self.reanchor_button.setToolTip(
            "Vouch for this copy as it is now: a new checkpoint beside it, so that an older "
            "copy put in its place is caught from now on"
        )
        self.reanchor_button.setVisible(False)
        row.addWidget(self.verify_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.progress, 1)
        layout.addLayout(row)
        layout.addWidget(self.result)
        layout.addWidget(self.reanchor_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.verify_button.clicked.connect(self.verify_requested.emit)
        self.cancel_button.clicked.connect(self.cancel_requested.emit)

    def show_log(self, rows: list[dict[str, Any]]) -> None:
        """Fill the table (the newest entries, when the journal is long)."""
        first = rows[0]["seq"] if rows else 1
        self.span.setText(
            f"The newest {len(rows)} entries (from entry {first}); Export gives the whole journal."
            if first > 1
            else f"All {counted(len(rows), 'journal entry', 'journal entries')}."
        )
        self.model.set_rows(rows)
        if rows:
            self.table.scrollToBottom()

    def verifying(self, running: bool) -> None:
        """Switch buttons while a verify runs."""
        self.verify_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        if running:
            self.progress.setValue(0)
            self.result.setText("Checking every chain and signature…")

    def show_progress(self, done: int, total: int) -> None:
        """Move the progress bar."""
        self.progress.setMaximum(total)
        self.progress.setValue(done)

    def clear(self) -> None:
        """Forget what was shown (locking)."""
        self.model.set_rows([])
        self.span.setText("")
