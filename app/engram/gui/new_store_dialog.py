"""File > New store…: the passphrase, typed twice, with a strength estimate and a minimum.

The strength comes from zxcvbn (Dropbox's estimator: dictionary words, names, keyboard
patterns, dates, l33t), not from rules about digits and capitals. A copied store can be
attacked offline, guess after guess, with nothing in the way but Argon2id's half second per
guess, so the least it accepts is zxcvbn's score 3 of 4 (about 10^8 guesses to find it).
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
    QVBoxLayout,
    QWidget,
)
from zxcvbn import zxcvbn

from engram.gui.keyring_probe import KeyringProbe

MINIMUM_SCORE = 3
ESTIMATED_CHARS = 100  # zxcvbn slows down on very long input; what is beyond adds only strength
SCORE_WORDS = ("very weak", "weak", "fair", "strong", "very strong")
WHY_THE_MINIMUM = (
    "Anyone with a copy of the store can try passphrases offline, as fast as their "
    "computers allow; only the passphrase's strength stands in the way. A passphrase needs "
    "the estimator's score 3 of 4 (strong, about 10^8 guesses), for example four or five "
    "unrelated words."
)


@dataclass(frozen=True, slots=True)
class Strength:
    """How guessable a passphrase is, in words."""

    score: int
    enough: bool
    text: str


def passphrase_strength(passphrase: str) -> Strength:
    """zxcvbn's estimate of `passphrase`, and whether it meets the minimum."""
    if not passphrase:
        return Strength(0, False, "")
    result = zxcvbn(passphrase[:ESTIMATED_CHARS])
    score = int(result["score"])
    feedback = result["feedback"]
    hint = feedback.get("warning") or " ".join(feedback.get("suggestions") or [])
    text = f"Strength: {SCORE_WORDS[score]}."
    if score < MINIMUM_SCORE:
        text += f" {hint}" if hint else " Add another word or two."
    return Strength(score, score >= MINIMUM_SCORE, text.strip())


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
        self.passphrase = QLineEdit()
        self.passphrase.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase.setAccessibleName("Passphrase")
        self.passphrase.setToolTip(WHY_THE_MINIMUM)
        form.addRow("&Passphrase:", self.passphrase)
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
        strength = passphrase_strength(self.passphrase.text())
        self.meter.setValue(strength.score if self.passphrase.text() else 0)
        self.strength.setText(strength.text)
        if not self.passphrase.text():
            problem = "Type a passphrase."
        elif not strength.enough:
            problem = "The passphrase is too easy to guess; hover over it to see why."
        elif self.again.text() != self.passphrase.text():
            problem = (
                "Type the same passphrase again below."
                if not self.again.text()
                else ("The two passphrases differ.")
            )
        else:
            problem = ""
        self.problem.setText(problem)
        self.create_button.setEnabled(not problem)

    def secret(self) -> NewStoreSecret:
        """The accepted answer."""
        return NewStoreSecret(self.passphrase.text(), self.remember.isChecked())
