"""Unlock, create or open a store."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class UnlockPage(QWidget):
    """The first thing a person sees; and what the idle lock returns to."""

    unlock_requested = Signal(str, str, bool)
    create_requested = Signal(str, str, bool)
    browse_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.addStretch(1)
        card = QFrame()
        card.setFrameShape(QFrame.Shape.StyledPanel)
        card.setMaximumWidth(560)
        layout = QVBoxLayout(card)
        title = QLabel("<h2>Engram</h2>What an AI agent remembers, and who it may tell.")
        title.setWordWrap(True)
        layout.addWidget(title)
        form = QFormLayout()
        row = QHBoxLayout()
        self.store = QComboBox()
        self.store.setEditable(True)
        self.store.setAccessibleName("Store file")
        self.store.setMinimumWidth(320)
        self.browse = QPushButton("Browse…")
        row.addWidget(self.store, 1)
        row.addWidget(self.browse)
        store_label = QLabel("&Store:")
        store_label.setBuddy(self.store)
        form.addRow(store_label, row)
        self.passphrase = QLineEdit()
        self.passphrase.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase.setAccessibleName("Passphrase")
        self.passphrase.setPlaceholderText("leave empty to use this computer's keyring")
        form.addRow("&Passphrase:", self.passphrase)
        self.remember = QCheckBox("&Remember on this computer (OS keyring)")
        form.addRow("", self.remember)
        layout.addLayout(form)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setAccessibleName("Unlock message")
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.message)
        buttons = QHBoxLayout()
        self.create_button = QPushButton("&New store…")
        self.unlock_button = QPushButton("&Unlock")
        self.unlock_button.setDefault(True)
        buttons.addWidget(self.create_button)
        buttons.addStretch(1)
        buttons.addWidget(self.unlock_button)
        layout.addLayout(buttons)
        center = QHBoxLayout()
        center.addStretch(1)
        center.addWidget(card, 3)
        center.addStretch(1)
        outer.addLayout(center)
        outer.addStretch(2)
        self.unlock_button.clicked.connect(self._unlock)
        self.passphrase.returnPressed.connect(self._unlock)
        self.create_button.clicked.connect(
            lambda: self.create_requested.emit(
                self.store.currentText().strip(), self.passphrase.text(), self.remember.isChecked()
            )
        )
        self.browse.clicked.connect(self.browse_requested.emit)

    def _unlock(self) -> None:
        self.unlock_requested.emit(
            self.store.currentText().strip(), self.passphrase.text(), self.remember.isChecked()
        )

    def set_recent(self, paths: list[str], current: str | None) -> None:
        """Offer recent stores; put `current` first."""
        self.store.clear()
        for path in dict.fromkeys([p for p in [current, *paths] if p]):
            self.store.addItem(path)

    def busy(self, working: bool, text: str = "") -> None:
        """Disable the form while a key is being tried."""
        for widget in (
            self.unlock_button,
            self.create_button,
            self.passphrase,
            self.store,
            self.browse,
        ):
            widget.setEnabled(not working)
        self.message.setText(text)

    def reset(self, message: str = "") -> None:
        """Back to an empty passphrase (after a lock or a failure)."""
        self.passphrase.clear()
        self.busy(False, message)
        self.passphrase.setFocus()
