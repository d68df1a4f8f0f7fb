"""File > New store… and File > Change passphrase…: the passphrase, typed twice, with a
strength estimate and the minimum control/passphrase.py sets for every face (zxcvbn's
score 3 of 4); and File > Forget the key on this computer…, which asks the passphrase.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engram.control.passphrase import MINIMUM_SCORE, WHY_THE_MINIMUM, passphrase_strength
from engram.gui.keyring_probe import KeyringProbe

__all__ = [
    "MINIMUM_SCORE",
    "ChangePassphraseDialog",
    "ForgetKeyDialog",
    "NewStoreDialog",
    "NewStoreSecret",
    "passphrase_strength",
]


class NewPassphraseFields:
    """The passphrase, its strength meter and words, and the passphrase again, as rows of
    `form`; `problem()` says what still stands in the way ('' when nothing does)."""

    def __init__(self, form: QFormLayout, label: str = "&Passphrase:") -> None:
        self.passphrase = QLineEdit()
        self.passphrase.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase.setAccessibleName("Passphrase")
        self.passphrase.setToolTip(WHY_THE_MINIMUM)
        form.addRow(label, self.passphrase)
        self.meter = QProgressBar()
        self.meter.setRange(0, 4)
        self.meter.setTextVisible(False)
        self.meter.setMaximumHeight(8)
        self.meter.setAccessibleName("Passphrase strength")
        self.meter.setToolTip(WHY_THE_MINIMUM)
        form.addRow("", self.meter)
        self.strength = QLabel("")
        self.strength.setWordWrap(True)
        self.strength.setAccessibleName("Passphrase strength")
        self.strength.setToolTip(WHY_THE_MINIMUM)
        form.addRow("", self.strength)
        self.again = QLineEdit()
        self.again.setEchoMode(QLineEdit.EchoMode.Password)
        self.again.setAccessibleName("Passphrase again")
        form.addRow("&Again:", self.again)

    def problem(self) -> str:
        """Update the meter; what is missing, in one sentence, or ''."""
        strength = passphrase_strength(self.passphrase.text())
        self.meter.setValue(strength.score if self.passphrase.text() else 0)
        self.strength.setText(strength.text)
        if not self.passphrase.text():
            return "Type a passphrase."
        if not strength.enough:
            return "The passphrase is too easy to guess; hover over it to see why."
        if self.again.text() != self.passphrase.text():
            return (
                "Type the same passphrase again below."
                if not self.again.text()
                else "The two passphrases differ."
            )
        return ""


@dataclass(frozen=True, slots=True)
class NewStoreSecret:
    """What the dialog answers: the passphrase, and whether to remember the key here."""

    passphrase: str
    remember: bool


class NewStoreDialog(QDialog):
    """Passphrase twice, strength, "Remember on this computer" only where a keyring works."""

    def __init__(self, path: str, probe: KeyringProbe, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New store")
        self.setMinimumWidth(480)
        self.probe = probe
        layout = QVBoxLayout(self)
        intro = QLabel(
            f"A new, empty store at <b>{path}</b>. Its passphrase opens it on any computer; "
            "there is no way to recover a store whose passphrase is lost."
        )
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(intro)
        form = QFormLayout()
        self.fields = NewPassphraseFields(form)
        self.passphrase, self.again = self.fields.passphrase, self.fields.again
        self.meter, self.strength = self.fields.meter, self.fields.strength
        self.remember = QCheckBox("&Remember on this computer (OS keyring)")
        self.remember.setAccessibleName("Remember the key on this computer")
        form.addRow("", self.remember)
        self.keyring_reason = QLabel("")
        self.keyring_reason.setWordWrap(True)
        self.keyring_reason.setAccessibleName("Why the key cannot be remembered")
        form.addRow("", self.keyring_reason)
        layout.addLayout(form)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setAccessibleName("Why the store cannot be created yet")
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.create_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.create_button.setText("Create store")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.passphrase.textChanged.connect(self._check)
        self.again.textChanged.connect(self._check)
        probe.changed.connect(self._keyring_known)
        self._keyring_known()
        self._check()

    def _keyring_known(self) -> None:
        usable = self.probe.usable is True
        self.remember.setEnabled(usable)
        if not usable:
            self.remember.setChecked(False)
        self.remember.setToolTip(
            "The store's key goes into this computer's keyring, so it opens here without the "
            "passphrase."
            if usable
            else self.probe.reason
        )
        self.keyring_reason.setText("" if usable else self.probe.reason)
        self.keyring_reason.setVisible(not usable)

    def _check(self) -> None:
        problem = self.fields.problem()
        self.problem.setText(problem)
        self.create_button.setEnabled(not problem)

    def secret(self) -> NewStoreSecret:
        """The accepted answer."""
        return NewStoreSecret(self.passphrase.text(), self.remember.isChecked())


def _buttons(dialog: QDialog, layout: QVBoxLayout, text: str) -> QPushButton:
    buttons = QDialogButtonBox(
        QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
    )
    ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
    ok.setText(text)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    return ok


class ChangePassphraseDialog(QDialog):
    """The new passphrase, twice, with the strength meter; the old one stops opening it."""

    def __init__(self, where: str, had_passphrase: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Change passphrase" if had_passphrase else "Set a passphrase")
        self.setMinimumWidth(480)
        layout = QVBoxLayout(self)
        intro = QLabel(
            f"The store at {where} will open with the new passphrase; the old one stops "
            "opening it, and a copy made before now still opens with the old one. The notes "
            "stay as they are, and so does a key remembered on this computer."
            if had_passphrase
            else f"The store at {where} opens only with this computer's keyring; a "
            "passphrase opens it on any computer too."
        )
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(intro)
        form = QFormLayout()
        self.fields = NewPassphraseFields(form, "&New passphrase:")
        self.passphrase, self.again = self.fields.passphrase, self.fields.again
        self.strength = self.fields.strength
        layout.addLayout(form)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setAccessibleName("Why the passphrase cannot be changed yet")
        layout.addWidget(self.problem)
        self.ok = _buttons(
            self, layout, "Change passphrase" if had_passphrase else "Set passphrase"
        )
        self.passphrase.textChanged.connect(self._check)
        self.again.textChanged.connect(self._check)
        self._check()

    def _check(self) -> None:
        problem = self.fields.problem()
        self.problem.setText(problem)
        self.ok.setEnabled(not problem)

    def new_passphrase(self) -> str:
        """The accepted answer."""
        return self.passphrase.text()


class ForgetKeyDialog(QDialog):
    """Forget the key on this computer: the passphrase typed once, to prove it is known,
    since only it opens the store afterwards."""

    def __init__(self, where: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Forget the key on this computer")
        self.setMinimumWidth(480)
        layout = QVBoxLayout(self)
        intro = QLabel(
            f"The key of the store at {where} is removed from this computer's keyring; from "
            "then on only its passphrase opens it, here and anywhere. Type the passphrase to "
            "show it is known: a store whose passphrase is lost cannot be opened by anyone."
        )
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(intro)
        form = QFormLayout()
        self.passphrase = QLineEdit()
        self.passphrase.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase.setAccessibleName("Passphrase")
        form.addRow("&Passphrase:", self.passphrase)
        layout.addLayout(form)
        self.ok = _buttons(self, layout, "Forget the key")
        self.passphrase.textChanged.connect(lambda text: self.ok.setEnabled(bool(text)))
        self.ok.setEnabled(False)

    def typed(self) -> str:
        """The accepted answer."""
        return self.passphrase.text()
