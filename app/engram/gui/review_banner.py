"""The banner that says, above everything, that the open store is a review copy (issue 21
item 3): whose memory, from which store, taken when."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QWidget


class ReviewCopyBanner(QFrame):
    """Shown while a review copy is open; its words come from control (review_copy)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reviewCopyBanner")
        self.setStyleSheet(
            "#reviewCopyBanner { background: rgba(160, 110, 255, 0.22);"
            " border: 1px solid rgba(120, 80, 200, 0.8); border-radius: 4px; }"
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        self.label = QLabel()
        self.label.setWordWrap(True)  # never widens the window
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # the words are data
        self.label.setAccessibleName("Review copy")
        layout.addWidget(self.label, 1)
        self.setVisible(False)

    def show_sentence(self, sentence: str) -> None:
        """Say `sentence` (the copy's own words), or hide the banner when it is empty."""
        self.label.setText(sentence)
        self.setVisible(bool(sentence))

    def text(self) -> str:
        """What it says."""
        return self.label.text()
