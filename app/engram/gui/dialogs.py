"""Every question the inspector asks a person, behind one interface (git-cola's idea).

The controller asks through `Prompts`; tests swap in their own answers. Destructive actions
(erase, delete a conversation) use one typed confirmation dialog.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from engram.gui.theme import SCOPE_MEANING
from engram.model.scope import Scope


class TypedConfirmDialog(QDialog):
    """Explains what will happen; the action button wakes only for the exact words."""

    def __init__(
        self,
        title: str,
        explanation_html: str,
        expected: str,
        action: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.expected = expected
        layout = QVBoxLayout(self)
        text = QTextBrowser()
        text.setHtml(explanation_html)
        text.setMinimumSize(520, 220)
        layout.addWidget(text)
        layout.addWidget(QLabel(f"Type <b>{expected}</b> to confirm:"))
        self.field = QLineEdit()
        self.field.setAccessibleName(f"Type {expected} to confirm")
        layout.addWidget(self.field)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.action = self.buttons.addButton(action, QDialogButtonBox.ButtonRole.DestructiveRole)
        self.action.setEnabled(False)
        self.action.clicked.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.field.textChanged.connect(lambda t: self.action.setEnabled(t == expected))

    def typed(self) -> str:
        """What was typed."""
        return self.field.text()


class EditTextDialog(QDialog):
    """Edit a note's text; the old version stays, closed."""

    def __init__(self, current: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Edit note")
        layout = QVBoxLayout(self)
        layout.addWidget(
            QLabel(
                "The current text becomes an earlier version; it is kept, "
                "closed, in the note's history."
            )
        )
        self.field = QPlainTextEdit(current)
        self.field.setAccessibleName("New text of the note")
        layout.addWidget(self.field)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


class PromptHost(Protocol):
    """Every question the inspector asks; each answer is None when the person cancels."""

    def edit_text(self, current: str) -> str | None: ...
    def choose_scope(self, current: Scope) -> Scope | None: ...
    def delete_reason(self) -> str | None: ...
    def typed_confirm(
        self, title: str, explanation_html: str, expected: str, action: str
    ) -> str | None: ...
    def excise_reason(self) -> str | None: ...
    def reject_reason(self) -> str | None: ...
    def actor_id(self) -> str | None: ...
    def save_path(self, suggested: str) -> str | None: ...
    def open_path(self) -> str | None: ...
    def show_report(self, title: str, text: str) -> None: ...
    def error(self, message: str) -> None: ...


class Prompts:
    """The real dialogs. Each returns None when the person cancels."""

    def __init__(self, parent: QWidget) -> None:
        self.parent = parent

    def edit_text(self, current: str) -> str | None:
        """Ask for a note's new text."""
        dialog = EditTextDialog(current, self.parent)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.field.toPlainText()

    def choose_scope(self, current: Scope) -> Scope | None:
        """Ask for a new scope."""
        labels = [f"{s.value} — {SCOPE_MEANING[s]}" for s in Scope]
        choice, ok = QInputDialog.getItem(
            self.parent,
            "Change scope",
            "Who may this note reach?",
            labels,
            list(Scope).index(current),
            False,
        )
        return Scope(choice.split(" ", 1)[0]) if ok else None

    def delete_reason(self) -> str | None:
        """Ask why a note is being deleted ('' is fine)."""
        reason, ok = QInputDialog.getText(
            self.parent,
            "Delete note",
            "The note's interval closes now; its record stays in the audit log.\n"
            "Reason (optional):",
        )
        return reason if ok else None

    def typed_confirm(
        self, title: str, explanation_html: str, expected: str, action: str
    ) -> str | None:
        """Typed confirmation for destructive actions; returns what was typed."""
        dialog = TypedConfirmDialog(title, explanation_html, expected, action, self.parent)
        return dialog.typed() if dialog.exec() == QDialog.DialogCode.Accepted else None

    def excise_reason(self) -> str | None:
        """Why a tool result's content is removed (kept, sealed, in the log)."""
        reason, ok = QInputDialog.getText(
            self.parent,
            "Remove tool result",
            "The result's content is deleted for good; the log keeps who removed it, when, "
            "and why.\nReason:",
        )
        return reason.strip() or None if ok else None

    def reject_reason(self) -> str | None:
        """Why a candidate is rejected (required; kept, sealed, in its audit trail)."""
        reason, ok = QInputDialog.getText(
            self.parent, "Reject candidate", "Why is it not kept? (recorded with the decision)"
        )
        return reason.strip() or None if ok else None

    def actor_id(self) -> str | None:
        """Ask support staff for their own id, recorded on everything they do."""
        text, ok = QInputDialog.getText(
            self.parent,
            "Who is acting?",
            "You are opening someone else's memory. Your staff id is recorded on every "
            "change you make (e.g. staff:dana):",
        )
        return text.strip() or None if ok else None

    def save_path(self, suggested: str) -> str | None:
        """Where to write an export."""
        path, _ = QFileDialog.getSaveFileName(self.parent, "Export", suggested, "JSON (*.json)")
        return path or None

    def open_path(self) -> str | None:
        """Which store to open."""
        path, _ = QFileDialog.getOpenFileName(
            self.parent, "Open store", "", "Engram stores (*.engram);;All files (*)"
        )
        return path or None

    def show_report(self, title: str, text: str) -> None:
        """Show a long result (erasure report, verify problems)."""
        box = QMessageBox(self.parent)
        box.setWindowTitle(title)
        box.setText(title)
        box.setDetailedText(text)
        box.setInformativeText(text[:600])
        box.exec()

    def error(self, message: str) -> None:
        """Show an error sentence."""
        QMessageBox.warning(self.parent, "Engram", message)
