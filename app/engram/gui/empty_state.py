"""What the notes tab shows when there is nothing to list: an empty store, or a person
with no notes yet, and the ways to add them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget


class EmptyState(QWidget):
    """A sentence and the buttons that add what is missing."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setAccessibleName("Nothing to show yet")
        layout.addWidget(self.message)
        row = QHBoxLayout()
        row.addStretch(1)
        self.add_person = QPushButton("Add &person…")
        self.add_person.setToolTip("Add someone whose memory this store keeps.")
        self.add_person.setAccessibleName("Add a person")
        self.add_note = QPushButton("Add n&ote…")
        self.add_note.setToolTip("Write a note the agent will remember about this person.")
        self.add_note.setAccessibleName("Add a note")
        row.addWidget(self.add_person)
        row.addWidget(self.add_note)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)
        self.hide()

    def show_empty_store(self) -> None:
        """The store holds nobody yet."""
        self.message.setText(
            "<h3>This store is empty</h3>Nobody's memory is kept here yet. Add a person, "
            "then the notes the agent should remember about them."
        )
        self.add_person.setVisible(True)
        self.add_note.setVisible(False)
        self.show()

    def show_no_notes(self, person: str) -> None:
        """The person on screen has no notes at all."""
        self.message.setText(
            f"<h3>Nothing is kept about {person} yet</h3>Notes appear here as the agent "
            "learns from conversations, or when you add one."
        )
        self.add_person.setVisible(False)
        self.add_note.setVisible(True)
        self.show()
