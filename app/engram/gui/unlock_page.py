"""Unlock, create or open a store; on first run (no recent stores), a welcome that offers
the three ways in: open a store, create one, or open the demo."""

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
    create_requested = Signal()  # File > New store…, from the page
    browse_requested = Signal()
    demo_requested = Signal()

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
        self.welcome = self._welcome()
        layout.addWidget(self.welcome)
        self.form = QWidget()
        form = QFormLayout(self.form)
        form.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.store = QComboBox()
        self.store.setEditable(True)
        self.store.setAccessibleName("Store file")
        self.store.setMinimumWidth(320)
        self.browse = QPushButton("Browse…")
        self.browse.setAccessibleName("Choose a store file")
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
        self.remember.setAccessibleName("Remember the key on this computer")
        form.addRow("", self.remember)
        layout.addWidget(self.form)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setAccessibleName("Unlock message")
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.message)
        self.buttons = QWidget()
        buttons = QHBoxLayout(self.buttons)
        buttons.setContentsMargins(0, 0, 0, 0)
        self.create_button = QPushButton("&New store…")
        self.unlock_button = QPushButton("&Unlock")
        self.unlock_button.setDefault(True)
        self.create_button.setAccessibleName("Create a new store")
        self.unlock_button.setAccessibleName("Unlock the store with this passphrase")
        buttons.addWidget(self.create_button)
        buttons.addStretch(1)
        buttons.addWidget(self.unlock_button)
        layout.addWidget(self.buttons)
        center = QHBoxLayout()
        center.addStretch(1)
        center.addWidget(card, 3)
        center.addStretch(1)
        outer.addLayout(center)
        outer.addStretch(2)
        self.unlock_button.clicked.connect(self._unlock)
        self.passphrase.returnPressed.connect(self._unlock)
        self.create_button.clicked.connect(self.create_requested.emit)
        self.browse.clicked.connect(self.browse_requested.emit)
        self.welcome_open.clicked.connect(self.browse_requested.emit)
        self.welcome_create.clicked.connect(self.create_requested.emit)
        self.welcome_demo.clicked.connect(self.demo_requested.emit)
        # Return in the Store field, or a store picked from its list, moves on to the
        # passphrase: a passphrase typed next must never land in the clear-text path.
        line = self.store.lineEdit()
        assert line is not None
        line.returnPressed.connect(self._to_passphrase)
        self.store.activated.connect(lambda _index: self._to_passphrase())

    def _welcome(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 8, 0, 8)
        intro = QLabel(
            "No store has been opened on this computer yet. A store holds what an agent "
            "remembers about people, encrypted. Choose how to begin:"
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.welcome_open = QPushButton("&Open a store…")
        self.welcome_open.setToolTip("Open a store file that already exists (*.engram).")
        self.welcome_create = QPushButton("&Create a new store…")
        self.welcome_create.setToolTip("Start an empty store, protected by a passphrase.")
        self.welcome_demo = QPushButton("Open the &demo")
        self.welcome_demo.setToolTip(
            "A made-up store with three people, conversations, candidates and a deleted "
            "note, to see what the inspector shows."
        )
        for button, says in (
            (self.welcome_open, "Open a store that already exists"),
            (self.welcome_create, "Create a new, empty store"),
            (self.welcome_demo, "Open the demo store (built on first use)"),
        ):
            button.setAccessibleName(says)
            button.setMinimumHeight(36)
            layout.addWidget(button)
        return box

    @property
    def first_run(self) -> bool:
        """Whether the welcome is showing (no store to offer yet)."""
        return not self.welcome.isHidden()

    def set_keyring(self, usable: bool | None, reason: str) -> None:
        """Offer "Remember on this computer" only when a keyring works; otherwise say why."""
        self.remember.setEnabled(usable is True)
        if usable is not True:
            self.remember.setChecked(False)
        self.remember.setToolTip(
            "Put the store's key in this computer's keyring, so it opens here without the "
            "passphrase."
            if usable
            else reason
        )

    def _to_passphrase(self) -> None:
        self.passphrase.setFocus(Qt.FocusReason.OtherFocusReason)

    def _unlock(self) -> None:
        self.unlock_requested.emit(
            self.store.currentText().strip(), self.passphrase.text(), self.remember.isChecked()
        )

    def set_recent(self, paths: list[str], current: str | None) -> None:
        """Offer recent stores; put `current` first."""
        self.store.clear()
        offered = list(dict.fromkeys([p for p in [current, *paths] if p]))
        for path in offered:
            self.store.addItem(path)
        self.welcome.setHidden(bool(offered))
        self.form.setHidden(not offered)
        self.buttons.setHidden(not offered)
        if self.isVisible():  # a store is chosen: what is typed next is its passphrase
            (self.passphrase if offered else self.welcome_open).setFocus()

    def busy(self, working: bool, text: str = "") -> None:
        """Disable the form while a key is being tried."""
        for widget in (
            self.unlock_button,
            self.create_button,
            self.passphrase,
            self.store,
            self.browse,
            self.welcome_open,
            self.welcome_create,
            self.welcome_demo,
        ):
            widget.setEnabled(not working)
        self.message.setText(text)

    def reset(self, message: str = "") -> None:
        """Back to an empty passphrase (after a lock or a failure)."""
        self.passphrase.clear()
        self.busy(False, message)
        self.passphrase.setFocus()
