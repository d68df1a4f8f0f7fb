"""The inspector's own dialogs: typed confirmation for destructive actions, edit text,
delete a note, who is acting, a yes/no question, a readable report with Copy and Save, and
the keyboard shortcuts. `gui/prompts.py` shows them (and tracks them for the lock).
"""

from __future__ import annotations

import html
import itertools
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from engram.control.session import check_actor
from engram.gui.id_dialog import DIALOG_WIDTH, IdDialog


class TypedConfirmDialog(QDialog):
    """Explains what will happen; the action button wakes only for the exact words.

    The keyboard starts in the field, and Return there confirms once the words are right
    (the action is the default button, disabled until then); Return on anything else says
    under the field why nothing happened."""

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
        self.explanation = QTextBrowser()
        self.explanation.setHtml(explanation_html)
        self.explanation.setMinimumSize(520, 220)
        self.explanation.setTabChangesFocus(True)
        layout.addWidget(self.explanation)
        prompt = QLabel(f"Type <b>{html.escape(expected)}</b> to confirm:")
        layout.addWidget(prompt)
        self.field = QLineEdit()
        self.field.setAccessibleName(f"Type {expected} to confirm")
        prompt.setBuddy(self.field)
        layout.addWidget(self.field)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setAccessibleName("Why it cannot be confirmed yet")
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.action = self.buttons.addButton(action, QDialogButtonBox.ButtonRole.DestructiveRole)
        self.action.setEnabled(False)
        self.action.setToolTip(f"Type {expected} above to enable this")
        self.action.clicked.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        # Only once the buttons are inside the dialog: before, QDialog does not hear of the
        # default and picks the first auto-default button itself when shown.
        self.action.setDefault(True)  # Return in the field: only ever once it is enabled
        self.field.textChanged.connect(self._typed)
        self.field.returnPressed.connect(self._return_pressed)
        QWidget.setTabOrder(self.field, self.action)
        self.field.setFocus()  # the one thing to do here is type; the explanation reads as is

    def _typed(self, text: str) -> None:
        self.action.setEnabled(text == self.expected)
        self.problem.setText("")

    def _return_pressed(self) -> None:
        if self.field.text() != self.expected:  # the disabled default button does nothing
            self.problem.setText(
                f"What is typed is not “{self.expected}”: type it exactly, or press Esc to cancel."
            )

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
        self.field.setTabChangesFocus(True)  # a note is one statement: Tab moves on
        layout.addWidget(self.field)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save = buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save.setText("&Save")  # Alt+S, as every other dialog's action has a key
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
            "&Delete note", QDialogButtonBox.ButtonRole.DestructiveRole
        )
        # Return on the focused Delete button deletes (a button reached by Tab acts on
        # Return, as everywhere on Linux); elsewhere the default, Cancel, takes it.
        self.delete.setAutoDefault(True)
        self.delete.clicked.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.cancel.setDefault(True)  # once inside the dialog, or QDialog never hears of it
        _tab_in_visual_order(self.reason, self.buttons)
        self.reason.setFocus()  # the keyboard starts in the reason; Cancel stays the default


class ActorDialog(IdDialog):
    """Who is acting: staff give their own id; on a one-person store, the person themself."""

    def __init__(self, person: str, one_person_store: bool, parent: QWidget | None = None):
        mine = f", or <b>{person}</b> if this is your own memory" if one_person_store else ""
        super().__init__(
            "Who is acting?",
            f"You are opening <b>{person}</b>'s memory. Everything you change is recorded "
            f"under the id you give here: your staff id (for example <tt>staff:dana</tt>)"
            f"{mine}.",
            "Your id, recorded on every change",
            "staff:your-id",
            "Open",
            lambda text: check_actor(text, person, one_person_store),
            parent,
        )


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
        self.yes.setAutoDefault(True)  # focused by Tab, Return presses it; else Cancel
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        # Once inside the dialog, or QDialog never hears of it (see DeleteNoteDialog).
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setDefault(True)
        _tab_in_visual_order(None, self.buttons)


class ChoiceDialog(QDialog):
    """A question with a few ways forward and Cancel, the default; `chosen` is the key of
    the button pressed."""

    def __init__(
        self,
        title: str,
        text: str,
        choices: Sequence[tuple[str, str]],
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(DIALOG_WIDTH)
        layout = QVBoxLayout(self)
        self.text = QLabel(text)
        self.text.setWordWrap(True)
        layout.addWidget(self.text)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.choices: dict[str, QPushButton] = {}
        for key, label in choices:
            self.choices[key] = self.buttons.addButton(
                label, QDialogButtonBox.ButtonRole.AcceptRole
            )
        self.chosen: str | None = None
        # The box says which button before it says "accepted", so `chosen` is set in time.
        self.buttons.clicked.connect(self._clicked)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setDefault(True)
        _tab_in_visual_order(None, self.buttons)

    def _clicked(self, button: QAbstractButton) -> None:
        self.chosen = next((k for k, b in self.choices.items() if b is button), None)


def _tab_in_visual_order(first: QWidget | None, buttons: QDialogButtonBox) -> None:
    """Tab through a button box left to right, as it is drawn (the platform's layout
    decides the order), not in the order the buttons were added (found under openbox:
    Tab from the reason reached Cancel, drawn last, before "Delete note")."""
    box = buttons.layout()
    assert box is not None  # a QDialogButtonBox always lays out its buttons
    items = (box.itemAt(i) for i in range(box.count()))
    drawn = [w for item in items if item and isinstance(w := item.widget(), QPushButton)]
    chain: list[QWidget] = ([first] if first is not None else []) + list(drawn)
    for before, after in itertools.pairwise(chain):
        QWidget.setTabOrder(before, after)


class ReportDialog(QDialog):
    """A long result in full (an erasure summary, verify problems), with Copy and Save.

    Save… asks where through `ask_path` (the prompt host's save dialog, so a lock closes
    it like every other dialog) and says a failed write through `fail`."""

    def __init__(
        self,
        title: str,
        text: str,
        parent: QWidget | None = None,
        *,
        ask_path: Callable[[str], str | None],
        fail: Callable[[str], None],
    ) -> None:
        super().__init__(parent)
        self._ask_path = ask_path
        self._fail = fail
        self.setWindowTitle(title)
        self.setMinimumWidth(DIALOG_WIDTH + 120)
        layout = QVBoxLayout(self)
        heading = QLabel(f"<b>{html.escape(title)}</b>")
        layout.addWidget(heading)
        self.text = QPlainTextEdit(text)
        self.text.setReadOnly(True)
        self.text.setTabChangesFocus(True)
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
        path = self._ask_path(self.windowTitle().replace(" ", "-") + ".txt")
        if not path:  # cancelled, or closed by a lock: nothing is written
            return
        try:
            self.save_to(path)
        except OSError as error:
            self._fail(
                f"The report was not saved to {path} ({error.strerror}); choose another folder."
            )

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
    """The user's documents folder (where exports are offered first), or the home folder
    when there is none: a save dialog told to start in a missing folder opens in the
    working directory instead, which may be anywhere (a checkout, /)."""
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    if documents and Path(documents).is_dir():
        return documents
    return QStandardPaths.writableLocation(QStandardPaths.StandardLocation.HomeLocation)
