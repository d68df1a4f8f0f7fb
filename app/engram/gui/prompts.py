"""Every question the inspector asks a person, behind one host (git-cola's idea).

Controllers ask through a `PromptHost`; tests swap in their own answers. The real host,
`Prompts`, shows every modal dialog itself and keeps track of the open ones, so a lock can
close them all at once (`close_all`, KeePassXC's rule: nothing decrypted stays on screen);
a dialog closed that way answers "cancelled" whatever was typed or clicked. Lock and Quit
stay reachable from inside every dialog. A dialog opened from a dialog (a report's Save…)
asks through this host too, and sits above the one that opened it. The dialogs themselves
are in `gui/dialogs.py`; none of them opens another dialog on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QWidget,
)

from engram.control.bulk_notes import BulkPreview
from engram.control.turn_block import TurnSight
from engram.gui.add_dialogs import AddNoteDialog, AddPersonDialog, NoteToAdd, SourceChoice
from engram.gui.bulk_dialog import BulkPreviewDialog
from engram.gui.dialogs import (
    ActorDialog,
    ChoiceDialog,
    DeleteNoteDialog,
    EditTextDialog,
    QuestionDialog,
    ReportDialog,
    ShortcutsDialog,
    TypedConfirmDialog,
    documents_folder,
)
from engram.gui.keyring_probe import KeyringProbe
from engram.gui.new_store_dialog import (
    ChangePassphraseDialog,
    ForgetKeyDialog,
    NewStoreDialog,
    NewStoreSecret,
)
from engram.gui.review_passphrase_dialog import ReviewPassphraseDialog
from engram.gui.theme import SCOPE_MEANING
from engram.gui.turn_sight_dialog import TurnSightDialog
from engram.model.scope import Scope

T = TypeVar("T")
FILE_TYPES = {"json": "JSON", "pdf": "PDF documents", "txt": "Text", "engram": "Engram stores"}
STORE_FILTER = "Engram stores (*.engram);;All files (*)"
MEMORIES_FILTER = (
    "Memory lists and exports (*.txt *.md *.markdown *.json);;Text (*.txt);;Markdown (*.md "
    "*.markdown);;mem0 exports (*.json);;All files (*)"
)


class PromptHost(Protocol):
    """Every question the inspector asks; each answer is None when the person cancels."""

    def edit_text(self, current: str) -> str | None: ...
    def choose_scope(self, current: Scope, text: str) -> Scope | None: ...
    def delete_reason(self, text: str) -> str | None: ...
    def bulk_preview(self, preview: BulkPreview) -> tuple[BulkPreview, str] | None: ...
    def phrase_to_forget(self) -> str | None: ...
    def filter_name(self) -> str | None: ...
    def typed_confirm(
        self, title: str, explanation_html: str, expected: str, action: str
    ) -> str | None: ...
    def excise_reason(self) -> str | None: ...
    def reject_reason(self) -> str | None: ...
    def actor_id(self, person: str, one_person_store: bool) -> str | None: ...
    def save_path(self, suggested: str, caption: str) -> str | None: ...
    def show_turn_sight(self, sight: TurnSight) -> str | None: ...
    def open_path(self, folder: str = "") -> str | None: ...
    def backup_file(self, folder: str) -> str | None: ...
    def memories_file(self, folder: str) -> str | None: ...
    def restore_target(self, suggested: str) -> str | None: ...
    def backup_passphrase(self, backup: str) -> str | None: ...
    def new_store_path(self, folder: str) -> str | None: ...
    def new_store_secret(self, path: str, probe: KeyringProbe) -> NewStoreSecret | None: ...
    def new_passphrase(self, where: str, had_passphrase: bool) -> str | None: ...
    def forget_key_passphrase(self, where: str) -> str | None: ...
    def question(self, title: str, text: str, yes: str) -> bool: ...
    def review_passphrase(self, path: str, new: bool) -> str | None: ...
    def choose(self, title: str, text: str, choices: Sequence[tuple[str, str]]) -> str | None: ...
    def person_to_add(self) -> str | None: ...
    def note_to_add(self, sources: Sequence[SourceChoice]) -> NoteToAdd | None: ...
    def show_report(self, title: str, text: str) -> None: ...
    def show_about(self, html: str, icon: QPixmap) -> None: ...
    def show_shortcuts(self, rows: Sequence[tuple[str, str]]) -> None: ...
    def inform(self, title: str, text: str) -> None: ...
    def error(self, message: str) -> None: ...
    def close_all(self) -> None: ...


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

    def _top(self) -> QWidget:
        """The parent of a new dialog: the one open above the window, if any (a Save…
        opened from a report sits over the report, and under a window manager stays in
        front of it)."""
        return self._open[-1] if self._open else self.parent

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
        dialog = EditTextDialog(current, self._top())
        return self._ask(dialog, dialog.field.toPlainText)

    def choose_scope(self, current: Scope, text: str) -> Scope | None:
        """Ask for a new scope for the note showing `text` (the dialog quotes it)."""
        dialog = QInputDialog(self._top())
        dialog.setWindowTitle("Change scope")
        dialog.setLabelText(f"“{text}”\n\nWho may this note reach?")
        for label in dialog.findChildren(QLabel):  # a note's words are never markup
            label.setTextFormat(Qt.TextFormat.PlainText)
        labels = [f"{s.value} — {SCOPE_MEANING[s]}" for s in Scope]
        dialog.setComboBoxItems(labels)
        dialog.setComboBoxEditable(False)
        dialog.setTextValue(labels[list(Scope).index(current)])
        return self._ask(dialog, lambda: Scope(dialog.textValue().split(" ", 1)[0]))

    def delete_reason(self, text: str) -> str | None:
        """Confirm deleting the note showing `text`, with an optional reason ('' is fine)."""
        dialog = DeleteNoteDialog(text, self._top())
        return self._ask(dialog, lambda: dialog.reason.text().strip())

    def bulk_preview(self, preview: BulkPreview) -> tuple[BulkPreview, str] | None:
        """Many notes at once (issue 21 item 7): the preview, untick to leave one alone."""
        dialog = BulkPreviewDialog(preview, self._top())
        return self._ask(dialog, dialog.answer)

    def phrase_to_forget(self) -> str | None:
        """Note › Forget everything about…: the word or phrase."""
        return self._reason(
            "Forget everything about…",
            "Every note holding this word or phrase is listed first; nothing changes until "
            "you confirm.\nWord or phrase:",
        )

    def filter_name(self) -> str | None:
        """Save filter…: the name to keep the notes filters under."""
        return self._reason("Save filter", "Save these filters as:")

    def typed_confirm(
        self, title: str, explanation_html: str, expected: str, action: str
    ) -> str | None:
        """Typed confirmation for destructive actions; returns what was typed."""
        dialog = TypedConfirmDialog(title, explanation_html, expected, action, self._top())
        return self._ask(dialog, dialog.typed)

    def _reason(self, title: str, label: str) -> str | None:
        dialog = QInputDialog(self._top())
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
        dialog = ActorDialog(person, one_person_store, self._top())
        return self._ask(dialog, dialog.accepted_id)

    def save_path(self, suggested: str, caption: str) -> str | None:
        """Where to write an export or a report: a save dialog that opens in the documents
        folder, offering the suggested name's file type."""
        start = str(Path(documents_folder()) / suggested)
        suffix = Path(suggested).suffix.lstrip(".") or "json"
        kind = FILE_TYPES.get(suffix, f"{suffix.upper()} files")
        dialog = QFileDialog(self._top(), caption, start, f"{kind} (*.{suffix})")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)
        dialog.setDefaultSuffix(suffix)
        return self._ask(dialog, lambda: (dialog.selectedFiles() or [""])[0] or None)

    def open_path(self, folder: str = "") -> str | None:
        """Which store to open (starting in `folder`, where stores live)."""
        dialog = QFileDialog(
            self._top(), "Open store", folder, "Engram stores (*.engram);;All files (*)"
        )
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        return self._ask(dialog, lambda: (dialog.selectedFiles() or [""])[0] or None)

    def backup_file(self, folder: str) -> str | None:
        """File › Restore from backup…: which backup to put back (starting in `folder`)."""
        dialog = QFileDialog(self._top(), "Restore from backup: choose the backup", folder)
        dialog.setNameFilter(STORE_FILTER)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        return self._ask(dialog, lambda: (dialog.selectedFiles() or [""])[0] or None)

    def memories_file(self, folder: str) -> str | None:
        """File › Import memories…: the list or export to read (starting in `folder`, else
        the documents folder)."""
        dialog = QFileDialog(
            self._top(), "Import memories: choose the file", folder or documents_folder()
        )
        dialog.setNameFilter(MEMORIES_FILTER)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        return self._ask(dialog, lambda: (dialog.selectedFiles() or [""])[0] or None)

    def restore_target(self, suggested: str) -> str | None:
        """Where the restored store goes (`suggested`: a path in the stores folder). A file
        already there is not replaced by the dialog: the window asks about it itself."""
        dialog = QFileDialog(self._top(), "Restore the backup as", suggested, STORE_FILTER)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)
        dialog.setOption(QFileDialog.Option.DontConfirmOverwrite)
        dialog.setDefaultSuffix("engram")
        return self._ask(dialog, lambda: (dialog.selectedFiles() or [""])[0] or None)

    def backup_passphrase(self, backup: str) -> str | None:
        """The passphrase the backup opens with ('' for the key remembered here)."""
        dialog = QInputDialog(self._top())
        dialog.setWindowTitle("Restore from backup")
        dialog.setLabelText(
            f"{Path(backup).name} opens with the passphrase of the store it was taken from; "
            "it is checked before anything is put back.\n\nLeave it empty to use the key "
            "remembered on this computer.\nPassphrase:"
        )
        dialog.setInputMode(QInputDialog.InputMode.TextInput)
        dialog.setTextEchoMode(QLineEdit.EchoMode.Password)
        return self._ask(dialog, dialog.textValue)

    def show_turn_sight(self, sight: TurnSight) -> str | None:
        """Show what a turn got from memory; the id of a note the person chose to see."""
        dialog = TurnSightDialog(sight, self._top())
        return self._ask(dialog, lambda: dialog.chosen)

    def new_store_path(self, folder: str) -> str | None:
        """Where a new store goes: a save dialog that opens in `folder` (the data folder).
        An existing file is not overwritten: creating refuses it in one sentence."""
        dialog = QFileDialog(
            self._top(), "New store", str(Path(folder) / "my-store.engram"), STORE_FILTER
        )
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)
        dialog.setOption(QFileDialog.Option.DontConfirmOverwrite)
        dialog.setDefaultSuffix("engram")
        return self._ask(dialog, lambda: (dialog.selectedFiles() or [""])[0] or None)

    def new_store_secret(self, path: str, probe: KeyringProbe) -> NewStoreSecret | None:
        """The new store's passphrase (twice) and whether to remember its key here."""
        dialog = NewStoreDialog(path, probe, self._top())
        return self._ask(dialog, dialog.secret)

    def review_passphrase(self, path: str, new: bool) -> str | None:
        """A review copy's passphrase: chosen (twice) for a `new` copy, else typed once."""
        dialog = ReviewPassphraseDialog(path, new, self._top())
        return self._ask(dialog, dialog.chosen)

    def new_passphrase(self, where: str, had_passphrase: bool) -> str | None:
        """File › Change passphrase…: the new passphrase, typed twice, strong enough."""
        dialog = ChangePassphraseDialog(where, had_passphrase, self._top())
        return self._ask(dialog, dialog.new_passphrase)

    def forget_key_passphrase(self, where: str) -> str | None:
        """File › Forget the key on this computer…: the passphrase, to prove it is known."""
        dialog = ForgetKeyDialog(where, self._top())
        return self._ask(dialog, dialog.typed)

    def question(self, title: str, text: str, yes: str) -> bool:
        """A yes-or-no question whose default is no; True only for `yes`."""
        dialog = QuestionDialog(title, text, yes, self._top())
        return bool(self._ask(dialog, lambda: True))

    def choose(self, title: str, text: str, choices: Sequence[tuple[str, str]]) -> str | None:
        """One of a few ways forward (`choices`: key and button label); Cancel is the
        default. The key of the one chosen."""
        dialog = ChoiceDialog(title, text, choices, self._top())
        return self._ask(dialog, lambda: dialog.chosen)

    def person_to_add(self) -> str | None:
        """The id of a person to add."""
        dialog = AddPersonDialog(self._top())
        return self._ask(dialog, dialog.accepted_id)

    def note_to_add(self, sources: Sequence[SourceChoice]) -> NoteToAdd | None:
        """A new note: text, kind, scope, optionally the conversation it comes from."""
        dialog = AddNoteDialog(sources, self._top())
        return self._ask(dialog, dialog.note)

    def show_report(self, title: str, text: str) -> None:
        """Show a long result in full (erasure summary, verify problems), with Copy and
        Save."""
        dialog = ReportDialog(
            title,
            text,
            self._top(),
            ask_path=lambda suggested: self.save_path(suggested, "Save report"),
            fail=self.error,
        )
        self._ask(dialog, lambda: None)

    def show_about(self, html: str, icon: QPixmap) -> None:
        """Help > About."""
        box = QMessageBox(self._top())
        box.setWindowTitle("About Engram")
        box.setText(html)
        box.setIconPixmap(icon)
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        self._show(box)

    def show_shortcuts(self, rows: Sequence[tuple[str, str]]) -> None:
        """Help > Keyboard shortcuts."""
        self._ask(ShortcutsDialog(rows, self._top()), lambda: None)

    def inform(self, title: str, text: str) -> None:
        """Say something worth stopping for (where an unencrypted file went)."""
        box = QMessageBox(QMessageBox.Icon.Information, title, text, parent=self._top())
        self._show(box)

    def error(self, message: str) -> None:
        """Show an error sentence."""
        box = QMessageBox(QMessageBox.Icon.Warning, "Engram", message, parent=self._top())
        self._show(box)
