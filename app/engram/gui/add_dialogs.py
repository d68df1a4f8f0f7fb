"""Person > Add person… and Note > Add note…: what a new person or note needs, in words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from engram.gui.id_dialog import IdDialog
from engram.model.ids import person_id
from engram.model.scope import Kind, Scope

KIND_MEANING = {
    Kind.FACT: "Fact — something true about the person (lives in Lyon).",
    Kind.PREFERENCE: "Preference — how they like things (answers in French).",
    Kind.OPEN_THREAD: "Open thread — something to follow up (waiting for a visa).",
    Kind.STYLE: "Style — how to talk with them (short answers, no small talk).",
}
SCOPE_LINE = {
    Scope.DIRECT: "Only when the person alone reads; never in a shared conversation.",
    Scope.UNSPECIFIED: "Private, as direct, until the person says who may hear it.",
    Scope.PORTABLE: "May reach any audience, shared conversations included.",
}


@dataclass(frozen=True, slots=True)
class SourceChoice:
    """A conversation a note may cite, as a person knows it ("date · people · words")."""

    conversation: str
    label: str


@dataclass(frozen=True, slots=True)
class NoteToAdd:
    """What the Add note dialog answers."""

    text: str
    kind: Kind
    scope: Scope
    conversation: str | None


def _buttons(dialog: QDialog, ok: str) -> tuple[QDialogButtonBox, QWidget]:
    buttons = QDialogButtonBox(
        QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
    )
    accept = buttons.button(QDialogButtonBox.StandardButton.Ok)
    accept.setText(ok)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    return buttons, accept


class AddPersonDialog(IdDialog):
    """The id a person is known by to the agent's host (an email or a user name)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            "Add person",
            "Add someone whose memory this store keeps, by the id the agent's application "
            "knows them by (a user name or an email address).",
            "The new person's id",
            "for example ana or ana@example.org",
            "Add person",
            lambda text: str(person_id(text.strip())),
            parent,
        )


class AddNoteDialog(QDialog):
    """Text, kind, who may hear it (each scope in one line), and where it comes from."""

    def __init__(self, sources: Sequence[SourceChoice], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add note")
        self.setMinimumWidth(520)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.text = QPlainTextEdit()
        self.text.setAccessibleName("The note's text")
        self.text.setPlaceholderText("What should the agent remember?")
        self.text.setMaximumHeight(90)
        self.text.setTabChangesFocus(True)  # Tab moves on to Kind, never types a tab
        form.addRow("&Text:", self.text)
        self.kind = QComboBox()
        self.kind.setAccessibleName("Kind of note")
        for kind in Kind:
            self.kind.addItem(KIND_MEANING[kind], kind.value)
        form.addRow("&Kind:", self.kind)
        layout.addLayout(form)
        scopes = QWidget()
        scopes.setAccessibleName("Who may hear it")
        scope_layout = QVBoxLayout(scopes)
        scope_layout.setContentsMargins(0, 0, 0, 0)
        self.scope_group = QButtonGroup(self)
        self.scope_buttons: dict[Scope, QRadioButton] = {}
        for index, scope in enumerate(Scope):
            button = QRadioButton(f"{scope.value} — {SCOPE_LINE[scope]}")
            button.setAccessibleName(f"Scope {scope.value}: {SCOPE_LINE[scope]}")
            button.setToolTip(SCOPE_LINE[scope])
            self.scope_group.addButton(button, index)
            self.scope_buttons[scope] = button
            scope_layout.addWidget(button)
        self.scope_buttons[Scope.DIRECT].setChecked(True)
        heading = QLabel("Who may &hear it:")
        heading.setBuddy(self.scope_buttons[Scope.DIRECT])
        layout.addWidget(heading)
        layout.addWidget(scopes)
        form = QFormLayout()
        self.source = QComboBox()
        self.source.setAccessibleName("The conversation it comes from (optional)")
        self.source.addItem("No conversation — the person said so here", None)
        for choice in sources:
            self.source.addItem(choice.label, choice.conversation)
            self.source.setItemData(self.source.count() - 1, choice.conversation, 3)  # tooltip
        form.addRow("&From:", self.source)
        layout.addLayout(form)
        self.buttons, self.ok = _buttons(self, "Add note")
        layout.addWidget(self.buttons)
        self.text.textChanged.connect(self._check)
        self._check()

    def _check(self) -> None:
        self.ok.setEnabled(bool(self.text.toPlainText().strip()))

    def note(self) -> NoteToAdd:
        """The accepted note."""
        scope = list(Scope)[self.scope_group.checkedId()]
        data = self.source.currentData()
        return NoteToAdd(
            self.text.toPlainText().strip(),
            Kind(self.kind.currentData()),
            scope,
            str(data) if data else None,
        )
