"""The preview of a change to many notes (issue 21 item 7): what it will do, and every note
it will do it to, each ticked; untick the ones to leave alone. Cancel is the default, so
Enter changes nothing."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engram.control.bulk_notes import BulkAction, BulkPreview
from engram.control.wording import counted

DIALOG_WIDTH = 560
_VERB = {BulkAction.DELETE: "&Delete", BulkAction.RESCOPE: "&Change", BulkAction.FORGET: "&Forget"}


class BulkPreviewDialog(QDialog):
    """Lists the notes a bulk change would touch; answers the ids left ticked."""

    def __init__(self, preview: BulkPreview, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.preview = preview
        self.setWindowTitle(
            {
                BulkAction.DELETE: "Delete notes",
                BulkAction.RESCOPE: "Change the scope of notes",
                BulkAction.FORGET: "Forget notes",
            }[preview.action]
        )
        self.setMinimumWidth(DIALOG_WIDTH)
        layout = QVBoxLayout(self)
        self.sentence = QLabel(preview.sentence())
        self.sentence.setWordWrap(True)
        self.sentence.setAccessibleName("What the change does")
        layout.addWidget(self.sentence)
        self.list = QListWidget()
        self.list.setAccessibleName("The notes it changes; untick one to leave it alone")
        for note in preview.notes:
            item = QListWidgetItem(note.text or "[words erased]")
            item.setData(Qt.ItemDataRole.UserRole, note.id)
            closed = "" if note.status.value == "active" else f", {note.status.value}"
            item.setToolTip(f"{note.id} · {note.kind.value} · {note.scope.value}{closed}")
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.list.addItem(item)
        self.list.itemChanged.connect(lambda _item: self._count())
        layout.addWidget(self.list, 1)
        if preview.skipped:
            left = QLabel(
                f"{counted(len(preview.skipped), 'other note')} left alone: closed already, "
                "or already so."
            )
            left.setWordWrap(True)
            layout.addWidget(left)
        self.reason = QLineEdit()
        self.reason.setAccessibleName("Why the notes are deleted")
        if preview.action is BulkAction.DELETE:
            layout.addWidget(QLabel("Reason (optional, kept in the audit log):"))
            layout.addWidget(self.reason)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.apply = self.buttons.addButton("", QDialogButtonBox.ButtonRole.DestructiveRole)
        self.apply.setAutoDefault(True)  # Return on it (reached by Tab) applies
        self.cancel.setDefault(True)
        self.buttons.rejected.connect(self.reject)
        self.apply.clicked.connect(self.accept)
        layout.addWidget(self.buttons)
        self._count()

    def ticked(self) -> list[str]:
        """The ids of the notes left ticked."""
        return [
            str(self.list.item(i).data(Qt.ItemDataRole.UserRole))
            for i in range(self.list.count())
            if self.list.item(i).checkState() == Qt.CheckState.Checked
        ]

    def _count(self) -> None:
        ticked = len(self.ticked())
        self.apply.setText(f"{_VERB[self.preview.action]} {counted(ticked, 'note')}")
        self.apply.setEnabled(ticked > 0)

    def answer(self) -> tuple[BulkPreview, str]:
        """The preview with only the ticked notes, and the reason typed."""
        return self.preview.only(self.ticked()), self.reason.text().strip()
