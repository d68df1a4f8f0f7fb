"""Every question the inspector asks a person, behind one host (git-cola's idea).

Controllers ask through a `PromptHost`; tests swap in their own answers. The real host,
`Prompts`, shows every modal dialog itself and keeps track of the open ones, so a lock can
close them all at once (`close_all`, KeePassXC's rule: nothing decrypted stays on screen);
a dialog closed that way answers "cancelled" whatever was typed or clicked. Lock and Quit
stay reachable from inside every dialog. Destructive actions (erase, delete a conversation)
use one typed confirmation dialog.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from PySide6.QtCore import QStandardPaths
from PySide6.QtGui import QAction, QGuiApplication, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from engram.control.session import check_actor
from engram.control.turn_block import TurnSight
from engram.gui.add_dialogs import AddNoteDialog, AddPersonDialog, NoteToAdd, SourceChoice
from engram.gui.keyring_probe import KeyringProbe
from engram.gui.new_store_dialog import NewStoreDialog, NewStoreSecret
from engram.gui.theme import SCOPE_MEANING
from engram.gui.turn_sight_dialog import TurnSightDialog
from engram.model.errors import EngramError
from engram.model.scope import Scope

T = TypeVar("T")
FILE_TYPES = {"json": "JSON", "pdf": "PDF documents"}
DIALOG_WIDTH = 440  # word-wrapped explanations need room to be read
STORE_FILTER = "Engram stores (*.engram);;All files (*)"


class PromptHost(Protocol):
    """Every question the inspector asks; each answer is None when the person cancels."""

    def edit_text(self, current: str) -> str | None: ...
    def choose_scope(self, current: Scope) -> Scope | None: ...
    def delete_reason(self, text: str) -> str | None: ...
    def typed_confirm(
        self, title: str, explanation_html: str, expected: str, action: str
    ) -> str | None: ...
    def excise_reason(self) -> str | None: ...
    def reject_reason(self) -> str | None: ...
    def actor_id(self, person: str, one_person_store: bool) -> str | None: ...
    def save_path(self, suggested: str, caption: str) -> str | None: ...
    def show_turn_sight(self, sight: TurnSight) -> str | None: ...
    def open_path(self, folder: str = "") -> str | None: ...
    def new_store_path(self, folder: str) -> str | None: ...
    def new_store_secret(self, path: str, probe: KeyringProbe) -> NewStoreSecret | None: ...
    def question(self, title: str, text: str, yes: str) -> bool: ...
    def person_to_add(self) -> str | None: ...
    def note_to_add(self, sources: Sequence[SourceChoice]) -> NoteToAdd | None: ...
    def show_report(self, title: str, text: str) -> None: ...
    def show_about(self, html: str, icon: QPixmap) -> None: ...
    def show_shortcuts(self, rows: Sequence[tuple[str, str]]) -> None: ...
    def inform(self, title: str, text: str) -> None: ...
    def error(self, message: str) -> None: ...
    def close_all(self) -> None: ...


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


class DeleteNoteDialog(QDialog):
    """Shows the note about to be deleted; Cancel is the default, so Enter deletes nothing."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Delete note")
        self.setMinimumWidth(DIALOG_WIDTH)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Delete this note?"))
        self.note = QLabel(f"“{text}”")
        self.note.setWordWrap(True)
        self.note.setAccessibleName("The note to delete")
        self.note.setStyleSheet("font-weight: bold; padding: 6px 0")
        layout.addWidget(self.note)
        explanation = QLabel(
            "Its interval closes now and it is no longer used; its record stays in the audit log."
        )
        explanation.setWordWrap(True)
        layout.addWidget(explanation)
        layout.addWidget(QLabel("Reason (optional, kept in the audit log):"))
        self.reason = QLineEdit()
        self.reason.setAccessibleName("Why the note is deleted")
        layout.addWidget(self.reason)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.delete = self.buttons.addButton(
            "Delete note", QDialogButtonBox.ButtonRole.DestructiveRole
        )
        self.delete.setAutoDefault(False)
        self.cancel.setDefault(True)
        self.delete.clicked.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)


class ActorDialog(QDialog):
    """Who is acting: staff give their own id; on a one-person store, the person themself."""

    def __init__(self, person: str, one_person_store: bool, parent: QWidget | None = None):
        super().__init__(parent)
        self.person = person
        self.one_person_store = one_person_store
        self.setWindowTitle("Who is acting?")
        self.setMinimumWidth(DIALOG_WIDTH)
        layout = QVBoxLayout(self)
        mine = f", or <b>{person}</b> if this is your own memory" if one_person_store else ""
        intro = QLabel(
            f"You are opening <b>{person}</b>'s memory. Everything you change is recorded "
            f"under the id you give here: your staff id (for example <tt>staff:dana</tt>)"
            f"{mine}."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.field = QLineEdit()
        self.field.setAccessibleName("Your id, recorded on every change")
        self.field.setPlaceholderText("staff:your-id")
        layout.addWidget(self.field)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setAccessibleName("Why the id is not accepted")
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText("Open")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.field.textChanged.connect(self._check)
        self._check("")

    def actor(self) -> str | None:
        """The accepted id, or None while what is typed is not one."""
        try:
            return check_actor(self.field.text(), self.person, self.one_person_store)
        except EngramError:
            return None

    def _check(self, text: str) -> None:
        try:
            check_actor(text, self.person, self.one_person_store)
        except EngramError as error:
            self.ok.setEnabled(False)
            self.problem.setText(str(error) if text.strip() else "")
        else:
            self.ok.setEnabled(True)
            self.problem.setText("")


class QuestionDialog(QDialog):
    """A question with one way forward and Cancel, the default (Enter changes nothing)."""

    def __init__(self, title: str, text: str, yes: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(DIALOG_WIDTH)
        layout = QVBoxLayout(self)
        self.text = QLabel(text)
        self.text.setWordWrap(True)
        layout.addWidget(self.text)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.yes = self.buttons.addButton(yes, QDialogButtonBox.ButtonRole.AcceptRole)
        self.yes.setAutoDefault(False)
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setDefault(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)


class ReportDialog(QDialog):
    """A long result in full (an erasure summary, verify problems), with Copy and Save."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(DIALOG_WIDTH + 120)
        layout = QVBoxLayout(self)
        heading = QLabel(f"<b>{html.escape(title)}</b>")
        layout.addWidget(heading)
        self.text = QPlainTextEdit(text)
        self.text.setReadOnly(True)
        self.text.setMinimumHeight(260)
        self.text.setAccessibleName(title)
        self.text.setToolTip("The whole report; select to copy part of it")
        layout.addWidget(self.text, 1)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy = self.buttons.addButton("&Copy", QDialogButtonBox.ButtonRole.ActionRole)
        self.save = self.buttons.addButton("&Save…", QDialogButtonBox.ButtonRole.ActionRole)
        for button, tip in (
            (self.copy, "Copy the whole report to the clipboard"),
            (self.save, "Save the report as a text file only you can read"),
        ):
            button.setAccessibleName(tip)
            button.setToolTip(tip)
        self.copy.clicked.connect(self.copy_all)
        self.save.clicked.connect(self._save)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.saved: str | None = None

    def copy_all(self) -> None:
        """Put the whole report on the clipboard."""
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.text.toPlainText())

    def _save(self) -> None:
        start = str(Path(documents_folder()) / (self.windowTitle().replace(" ", "-") + ".txt"))
        dialog = QFileDialog(self, "Save report", start, "Text (*.txt)")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix("txt")
        if dialog.exec() == QDialog.DialogCode.Accepted and dialog.selectedFiles():
            self.save_to(dialog.selectedFiles()[0])

    def save_to(self, path: str) -> None:
        """Write the report, readable by its owner only."""
        target = Path(path)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(self.text.toPlainText() + "\n")
        target.chmod(0o600)
        self.saved = str(target)


class ShortcutsDialog(QDialog):
    """Every keyboard shortcut of the window, read from its actions."""

    def __init__(self, rows: Sequence[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.setMinimumSize(DIALOG_WIDTH, 420)
        layout = QVBoxLayout(self)
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels(["Action", "Keys"])
        self.table.setAccessibleName("Keyboard shortcuts")
        self.table.setToolTip("Every keyboard shortcut of the inspector")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setTabKeyNavigation(False)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for row, (what, keys) in enumerate(rows):
            self.table.setItem(row, 0, QTableWidgetItem(what))
            self.table.setItem(row, 1, QTableWidgetItem(keys))
        self.table.resizeColumnToContents(1)
        layout.addWidget(self.table, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def rows(self) -> list[tuple[str, str]]:
        """What the table lists."""
        cells = [
            (self.table.item(r, 0), self.table.item(r, 1)) for r in range(self.table.rowCount())
        ]
        return [(a.text(), b.text()) for a, b in cells if a is not None and b is not None]


def documents_folder() -> str:
    """The user's documents folder (where exports are offered first)."""
    return QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)


class Prompts:
    """The real dialogs, all shown through `_ask`, which tracks them for `close_all`."""

    def __init__(self, parent: QWidget, shortcuts: Sequence[QAction] = ()) -> None:
        self.parent = parent
        self.shortcuts = list(shortcuts)  # lock and quit, reachable above any dialog
        self._open: list[QDialog] = []
        self._closings = 0

    def _ask(self, dialog: QDialog, answer: Callable[[], T]) -> T | None:
        """Show a dialog modally; its answer, or None if cancelled or closed by a lock."""
        closings = self._closings
        dialog.addActions(self.shortcuts)
        self._open.append(dialog)
        try:
            accepted = dialog.exec() == QDialog.DialogCode.Accepted
            result = answer() if accepted and closings == self._closings else None
        finally:
            self._open.remove(dialog)
            dialog.deleteLater()  # what it showed goes with it
        return result

    def _show(self, box: QMessageBox) -> None:
        self._ask(box, lambda: None)

    def close_all(self) -> None:
        """Close every open dialog (a lock, quitting); each answers "cancelled"."""
        self._closings += 1
        for dialog in reversed(self._open):
            dialog.reject()
        # Any other dialog of the window (Qt's own, say) goes too.
        for dialog in self.parent.findChildren(QDialog):
            if dialog.isVisible():
                dialog.reject()

    def edit_text(self, current: str) -> str | None:
        """Ask for a note's new text."""
        dialog = EditTextDialog(current, self.parent)
        return self._ask(dialog, dialog.field.toPlainText)

    def choose_scope(self, current: Scope) -> Scope | None:
        """Ask for a new scope."""
        dialog = QInputDialog(self.parent)
        dialog.setWindowTitle("Change scope")
        dialog.setLabelText("Who may this note reach?")
        labels = [f"{s.value} — {SCOPE_MEANING[s]}" for s in Scope]
        dialog.setComboBoxItems(labels)
        dialog.setComboBoxEditable(False)
        dialog.setTextValue(labels[list(Scope).index(current)])
        return self._ask(dialog, lambda: Scope(dialog.textValue().split(" ", 1)[0]))

    def delete_reason(self, text: str) -> str | None:
        """Confirm deleting the note showing `text`, with an optional reason ('' is fine)."""
        dialog = DeleteNoteDialog(text, self.parent)
        return self._ask(dialog, lambda: dialog.reason.text().strip())

    def typed_confirm(
        self, title: str, explanation_html: str, expected: str, action: str
    ) -> str | None:
        """Typed confirmation for destructive actions; returns what was typed."""
        dialog = TypedConfirmDialog(title, explanation_html, expected, action, self.parent)
        return self._ask(dialog, dialog.typed)

    def _reason(self, title: str, label: str) -> str | None:
        dialog = QInputDialog(self.parent)
        dialog.setWindowTitle(title)
        dialog.setLabelText(label)
        dialog.setInputMode(QInputDialog.InputMode.TextInput)
        return self._ask(dialog, lambda: dialog.textValue().strip() or None)

    def excise_reason(self) -> str | None:
        """Why a tool result's content is removed (kept, sealed, in the log)."""
        return self._reason(
            "Remove tool result",
            "The result's content is deleted for good; the log keeps who removed it, when, "
            "and why.\nReason:",
        )

    def reject_reason(self) -> str | None:
        """Why a candidate is rejected (required; kept, sealed, in its audit trail)."""
        return self._reason("Reject candidate", "Why is it not kept? (recorded with the decision)")

    def actor_id(self, person: str, one_person_store: bool) -> str | None:
        """Ask who is acting before opening `person`'s memory."""
        dialog = ActorDialog(person, one_person_store, self.parent)
        return self._ask(dialog, dialog.actor)

    def save_path(self, suggested: str, caption: str) -> str | None:
        """Where to write an export or a report: a save dialog that opens in the documents
        folder, offering the suggested name's file type."""
        start = str(Path(documents_folder()) / suggested)
        suffix = Path(suggested).suffix.lstrip(".") or "json"
        kind = FILE_TYPES.get(suffix, f"{suffix.upper()} files")
        dialog = QFileDialog(self.parent, caption, start, f"{kind} (*.{suffix})")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)
        dialog.setDefaultSuffix(suffix)
        return self._ask(dialog, lambda: (dialog.selectedFiles() or [""])[0] or None)

    def open_path(self, folder: str = "") -> str | None:
        """Which store to open (starting in `folder`, where stores live)."""
        dialog = QFileDialog(
            self.parent, "Open store", folder, "Engram stores (*.engram);;All files (*)"
        )
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        return self._ask(dialog, lambda: (dialog.selectedFiles() or [""])[0] or None)

    def show_turn_sight(self, sight: TurnSight) -> str | None:
        """Show what a turn got from memory; the id of a note the person chose to see."""
        dialog = TurnSightDialog(sight, self.parent)
        return self._ask(dialog, lambda: dialog.chosen)

    def new_store_path(self, folder: str) -> str | None:
        """Where a new store goes: a save dialog that opens in `folder` (the data folder).
        An existing file is not overwritten: creating refuses it in one sentence."""
        dialog = QFileDialog(
            self.parent, "New store", str(Path(folder) / "my-store.engram"), STORE_FILTER
        )
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)
        dialog.setOption(QFileDialog.Option.DontConfirmOverwrite)
        dialog.setDefaultSuffix("engram")
        return self._ask(dialog, lambda: (dialog.selectedFiles() or [""])[0] or None)

    def new_store_secret(self, path: str, probe: KeyringProbe) -> NewStoreSecret | None:
        """The new store's passphrase (twice) and whether to remember its key here."""
        dialog = NewStoreDialog(path, probe, self.parent)
        return self._ask(dialog, dialog.secret)

    def question(self, title: str, text: str, yes: str) -> bool:
        """A yes-or-no question whose default is no; True only for `yes`."""
        dialog = QuestionDialog(title, text, yes, self.parent)
        return bool(self._ask(dialog, lambda: True))

    def person_to_add(self) -> str | None:
        """The id of a person to add."""
        dialog = AddPersonDialog(self.parent)
        return self._ask(dialog, dialog.person)

    def note_to_add(self, sources: Sequence[SourceChoice]) -> NoteToAdd | None:
        """A new note: text, kind, scope, optionally the conversation it comes from."""
        dialog = AddNoteDialog(sources, self.parent)
        return self._ask(dialog, dialog.note)

    def show_report(self, title: str, text: str) -> None:
        """Show a long result in full (erasure summary, verify problems), with Copy and
        Save."""
        self._ask(ReportDialog(title, text, self.parent), lambda: None)

    def show_about(self, html: str, icon: QPixmap) -> None:
        """Help > About."""
        box = QMessageBox(self.parent)
        box.setWindowTitle("About Engram")
        box.setText(html)
        box.setIconPixmap(icon)
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        self._show(box)

    def show_shortcuts(self, rows: Sequence[tuple[str, str]]) -> None:
        """Help > Keyboard shortcuts."""
        self._ask(ShortcutsDialog(rows, self.parent), lambda: None)

    def inform(self, title: str, text: str) -> None:
        """Say something worth stopping for (where an unencrypted file went)."""
        box = QMessageBox(QMessageBox.Icon.Information, title, text, parent=self.parent)
        self._show(box)

    def error(self, message: str) -> None:
        """Show an error sentence."""
        box = QMessageBox(QMessageBox.Icon.Warning, "Engram", message, parent=self.parent)
        self._show(box)
