"""The person's journal as a readable log, and the integrity check with progress."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

COLUMNS = ("When", "Actor", "Action", "Cause")


class AuditPanel(QWidget):
    """Time, actor, action, cause — newest last, as the journal keeps them."""

    verify_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setAccessibleName("Audit log")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        self.verify_button = QPushButton("&Verify integrity")
        self.verify_button.setAccessibleName("Verify the store's integrity")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setAccessibleName("Verify progress")
        self.result = QLabel("Not checked yet.")
        self.result.setWordWrap(True)
        row.addWidget(self.verify_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.progress, 1)
        layout.addLayout(row)
        layout.addWidget(self.result)
        self.verify_button.clicked.connect(self.verify_requested.emit)
        self.cancel_button.clicked.connect(self.cancel_requested.emit)

    def show_log(self, rows: list[dict[str, Any]]) -> None:
        """Fill the table."""
        self.table.setRowCount(len(rows))
        for index, row in enumerate(rows):
            cause = row.get("cause") or {}
            extra = row.get("reason") or ""
            cells = (
                (row["at"] or "")[:19].replace("T", " "),
                row["actor"],
                row["action"] + (f" — “{extra}”" if extra else ""),
                " · ".join(v for v in (cause.get("conversation"), cause.get("turn")) if v),
            )
            for column, value in enumerate(cells):
                self.table.setItem(index, column, QTableWidgetItem(value))
        self.table.resizeColumnToContents(0)
        self.table.resizeColumnToContents(1)
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
        self.table.setRowCount(0)
