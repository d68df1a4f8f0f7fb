"""The person's journal as a readable log, and the integrity check with progress."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engram.gui.audit_log_view import AuditLogView, AuditModel


class AuditPanel(QWidget):
    """Time, actor, action, cause — newest last, as the journal keeps them."""

    verify_requested = Signal()
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        # The journal, filtered and paged (issue 21 item 5): gui.audit_log_view.
        self.log = AuditLogView()
        self.span, self.table = self.log.span, self.log.table
        layout.addWidget(self.log, 1)
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

    @property
    def model(self) -> AuditModel:
        """The log's rows now (each listing has a model of its own)."""
        return self.log.model

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
        self.log.clear()
