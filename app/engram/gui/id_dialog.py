"""A dialog that asks for one id and accepts it only once it is valid: who is acting, or
the person to add. The reason an id is refused shows under the field as it is typed."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from engram.model.errors import EngramError

DIALOG_WIDTH = 440  # word-wrapped explanations need room to be read


class IdDialog(QDialog):
    """One id field under an explanation; OK is enabled only while `check` accepts the
    text (it returns the accepted id, or raises EngramError with the reason)."""

    def __init__(
        self,
        title: str,
        intro_html: str,
        field_name: str,
        placeholder: str,
        ok_text: str,
        check: Callable[[str], str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._accepts = check
        self.setWindowTitle(title)
        self.setMinimumWidth(DIALOG_WIDTH)
        layout = QVBoxLayout(self)
        intro = QLabel(intro_html)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.field = QLineEdit()
        self.field.setAccessibleName(field_name)
        self.field.setPlaceholderText(placeholder)
        layout.addWidget(self.field)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setAccessibleName("Why the id is not accepted")
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText(ok_text)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.field.textChanged.connect(self._check)
        self._check("")

    def accepted_id(self) -> str | None:
        """The accepted id, or None while what is typed is not one."""
        try:
            return self._accepts(self.field.text())
        except EngramError:
            return None

    def _check(self, text: str) -> None:
        try:
            self._accepts(text)
        except EngramError as error:
            self.ok.setEnabled(False)
            self.problem.setText(str(error) if text.strip() else "")
        else:
            self.ok.setEnabled(True)
            self.problem.setText("")
