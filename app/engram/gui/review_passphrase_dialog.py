"""The passphrase of a review copy (issue 21 items 2 and 4): chosen twice for a new copy,
typed once to bring a reviewed one back."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from engram.gui.id_dialog import DIALOG_WIDTH


class ReviewPassphraseDialog(QDialog):
    """A passphrase for the review copy at `path`: `new` asks for it twice and says who
    should have it; otherwise once, to open the copy the reviewer worked on."""

    def __init__(self, path: str, new: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Review copy passphrase")
        self.setMinimumWidth(DIALOG_WIDTH)
        self.new = new
        layout = QVBoxLayout(self)
        intro = QLabel(
            f"The review copy {path} is sealed under a passphrase of its own: choose one and "
            "give it to the reviewer only. Without it the copy cannot be opened."
            if new
            else f"Type the passphrase the review copy {path} was sealed under."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        form = QFormLayout()
        self.passphrase = QLineEdit()
        self.passphrase.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase.setAccessibleName("Review copy passphrase")
        form.addRow("&Passphrase:", self.passphrase)
        self.again = QLineEdit()
        self.again.setEchoMode(QLineEdit.EchoMode.Password)
        self.again.setAccessibleName("Review copy passphrase again")
        if new:
            form.addRow("&Again:", self.again)
        layout.addLayout(form)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        layout.addWidget(self.problem)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self._accept_if_ready)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _accept_if_ready(self) -> None:
        if not self.passphrase.text():
            self.problem.setText("Type a passphrase.")
        elif self.new and self.passphrase.text() != self.again.text():
            self.problem.setText("The two passphrases differ; type the same one twice.")
        else:
            self.accept()

    def chosen(self) -> str:
        """The passphrase typed."""
        return self.passphrase.text()
