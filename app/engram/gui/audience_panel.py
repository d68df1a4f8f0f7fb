"""The audience simulator: the exact block and recall answer for a chosen audience."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engram.engine.assembly import AssembledBlock
from engram.engine.recall import RecallResult
from engram.model.scope import AudienceKind

AUDIENCES = (
    (AudienceKind.SUBJECT_ALONE, "The person alone"),
    (AudienceKind.SHARED, "The person with others"),
    (AudienceKind.UNKNOWN, "Unknown readers"),
)


class AudiencePanel(QWidget):
    """Pick who would be reading; see what the model would see."""

    preview_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        self.audience = QComboBox()
        self.audience.setAccessibleName("Who would be reading")
        for kind, label in AUDIENCES:
            self.audience.addItem(label, kind.value)
        self.refresh = QPushButton("Show &preview")
        self.refresh.setAccessibleName("Show the preview for this audience")
        top.addWidget(QLabel("Who would be reading:"))
        top.addWidget(self.audience, 1)
        top.addWidget(self.refresh)
        layout.addLayout(top)
        self.budget = QProgressBar()
        self.budget.setAccessibleName("Characters used of the block's budget")
        self.budget.setFormat("%v of %m characters")
        layout.addWidget(self.budget)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.block = QPlainTextEdit()
        self.block.setReadOnly(True)
        self.block.setTabChangesFocus(True)
        self.block.setFont(mono)
        self.block.setAccessibleName("The system block turn assembly would build")
        self.dropped = QListWidget()
        self.dropped.setAccessibleName("What was dropped and why")
        self.dropped.setMaximumHeight(110)
        self.recall = QPlainTextEdit()
        self.recall.setReadOnly(True)
        self.recall.setTabChangesFocus(True)
        self.recall.setAccessibleName("What the agent gets when it recalls memory")
        form = QFormLayout()
        form.addRow("Block the model would get:", self.block)
        form.addRow("Dropped:", self.dropped)
        form.addRow("When the agent recalls memory, it gets:", self.recall)
        layout.addLayout(form, 1)
        self.refresh.clicked.connect(lambda: self.preview_requested.emit(self.chosen()))
        self.audience.currentIndexChanged.connect(
            lambda _i: self.preview_requested.emit(self.chosen())
        )

    def chosen(self) -> str:
        """The audience kind picked."""
        return str(self.audience.currentData())

    def choose(self, kind: AudienceKind) -> None:
        """Pick an audience (keyboard users and tests)."""
        self.audience.setCurrentIndex(self.audience.findData(kind.value))

    def show_preview(self, block: AssembledBlock, recall: RecallResult) -> None:
        """Fill the panel with an assembly and a recall answer."""
        self.budget.setRange(0, block.budget)
        self.budget.setValue(min(block.used, block.budget))
        self.block.setPlainText(block.block or "(empty: nothing would be added for this audience)")
        self.dropped.clear()
        for item in block.dropped:
            self.dropped.addItem(
                f"{item.what}{' ' + item.note if item.note else ''}: {item.reason}"
            )
        if not block.dropped:
            self.dropped.addItem("nothing was dropped")
        lines = [recall.message] if recall.message else []
        lines += [f"- {t.text}" for t in recall.notes]
        lines += [f"~ {d}" for d in recall.digest]
        self.recall.setPlainText("\n".join(lines) or "(nothing)")

    def clear(self) -> None:
        """Forget what was shown (locking)."""
        self.block.clear()
        self.dropped.clear()
        self.recall.clear()
        self.budget.setValue(0)
