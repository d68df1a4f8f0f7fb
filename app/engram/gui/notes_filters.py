"""Above the notes table: the filter bar (text, status, scope, kind, "as of") and the
banner that says the table shows the past while time travel is on."""

from __future__ import annotations

from PySide6.QtCore import QDateTime, Qt, QTimeZone
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engram.gui.widgets import (
    clear_on_escape,
    describe,
)
from engram.model.notes import NoteStatus
from engram.model.scope import Kind, Scope


class NotesFilterBar(QWidget):
    """Text, status, scope, kind, and time travel, on two rows so the window stays narrow:
    the search field takes the first row, the filters the second."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        rows = QVBoxLayout(self)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.setSpacing(4)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find in note text…")
        self.search.setClearButtonEnabled(True)
        describe(
            self.search, "Find in note text", "Show only notes containing these words (Esc clears)"
        )
        self.search.setMinimumWidth(160)
        clear_on_escape(self.search)
        self.status = QComboBox()
        describe(self.status, "Status filter", "Show active notes, every interval, or closed ones")
        self.status.addItem("Active", [NoteStatus.ACTIVE.value])
        self.status.addItem("All intervals", None)
        self.status.addItem(
            "Closed only", [s.value for s in NoteStatus if s is not NoteStatus.ACTIVE]
        )
        self.scope = QComboBox()
        describe(self.scope, "Scope filter", "Show only notes of one scope")
        self.scope.addItem("Any scope", None)
        for scope in Scope:
            self.scope.addItem(scope.value, [scope.value])
        self.kind = QComboBox()
        describe(self.kind, "Kind filter", "Show only notes of one kind")
        self.kind.addItem("Any kind", None)
        for kind in Kind:
            self.kind.addItem(kind.value.replace("_", " "), [kind.value])
        for combo in (self.status, self.scope, self.kind):
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(7)
        self.time_travel = QCheckBox("As of")
        describe(
            self.time_travel,
            "Time travel: show the notes as of a moment",
            "Show the notes as they stood at a moment in the past (Ctrl+T)",
        )
        self.moment = QDateTimeEdit(QDateTime.currentDateTimeUtc())
        self.moment.setCalendarPopup(True)
        self.moment.setDisplayFormat("yyyy-MM-dd HH:mm")
        self.moment.setTimeZone(QTimeZone.utc())
        describe(self.moment, "The moment to see the notes as of (UTC)")
        self.moment.setEnabled(False)
        # Issue 21 item 7: only what was learned since this person was last opened here.
        self.since = QCheckBox("New since last visit")
        describe(self.since, "Show only notes added since you last opened this person here")
        self.last_visit: int | None = None  # the journal entry the last visit saw last
        self.count = QLabel("")
        self.count.setAccessibleName("How many notes are listed")
        self.count.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        # Saved filters (issue 21 item 7): kept on this computer, chosen from the list.
        self.saved = QComboBox()
        describe(self.saved, "Saved filters", "Set the filters to one saved before")
        self.saved.addItem("Saved filters", None)
        self.save_button = QPushButton("Save filter…")
        describe(self.save_button, "Save these filters under a name")
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.search, 1)
        top.addWidget(self.since)
        top.addWidget(self.saved)
        top.addWidget(self.save_button)
        rows.addLayout(top)
        filters = QHBoxLayout()
        filters.setContentsMargins(0, 0, 0, 0)
        for widget in (self.status, self.scope, self.kind, self.time_travel, self.moment):
            filters.addWidget(widget)
        filters.addWidget(self.count, 1)
        rows.addLayout(filters)

    def reset(self) -> bool:
        """Back to every active note, no search, no time travel (another person). Whether
        anything was set."""
        was_set = bool(
            self.search.text()
            or self.status.currentIndex()
            or self.scope.currentIndex()
            or self.kind.currentIndex()
            or self.time_travel.isChecked()
            or self.since.isChecked()
        )
        widgets = (self.search, self.status, self.scope, self.kind, self.time_travel, self.since)
        for widget in widgets:
            widget.blockSignals(True)
        self.search.clear()
        for combo in (self.status, self.scope, self.kind):
            combo.setCurrentIndex(0)
        self.time_travel.setChecked(False)
        self.since.setChecked(False)
        self.last_visit = None  # until the next person's last visit is known
        self.moment.setEnabled(False)
        for widget in widgets:
            widget.blockSignals(False)
        return was_set

    def state(self) -> dict[str, object]:
        """What is set, to save under a name."""
        return {
            "search": self.search.text(),
            "status": self.status.currentIndex(),
            "scope": self.scope.currentIndex(),
            "kind": self.kind.currentIndex(),
            "since": self.since.isChecked(),
        }

    def restore(self, state: dict[str, object]) -> None:
        """Set what a saved filter holds, silently (the caller lists once)."""
        widgets = (self.search, self.status, self.scope, self.kind, self.since)
        for widget in widgets:
            widget.blockSignals(True)
        self.search.setText(str(state.get("search", "")))
        for combo, key in ((self.status, "status"), (self.scope, "scope"), (self.kind, "kind")):
            index = state.get(key, 0)
            combo.setCurrentIndex(index if isinstance(index, int) and index < combo.count() else 0)
        self.since.setChecked(bool(state.get("since")))
        for widget in widgets:
            widget.blockSignals(False)

    def set_last_visit(self, seq: int | None, person: str) -> None:
        """Where this person's last visit here ended (None: the first visit, when every
        note is new)."""
        self.last_visit = seq
        self.since.setToolTip(
            f"Show only notes added since you last opened {person} on this computer"
            if seq is not None
            else f"This is your first visit to {person} on this computer: every note is new"
        )


class TimeTravelBanner(QFrame):
    """Says, while time travel is on, that what shows is the past and cannot be changed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timeTravelBanner")
        self.setStyleSheet(
            "#timeTravelBanner { background: rgba(255, 190, 0, 0.28);"
            " border: 1px solid rgba(200, 140, 0, 0.8); border-radius: 4px; }"
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        self.label = QLabel("")
        self.label.setWordWrap(True)  # never widens the window
        self.label.setAccessibleName("Time travel")
        self.now_button = QPushButton("Return to &now")
        describe(self.now_button, "Leave time travel and show the notes as they are now")
        layout.addWidget(self.label, 1)
        layout.addWidget(self.now_button)
        self.setVisible(False)

    def show_moment(self, text: str | None) -> None:
        """Show the banner for a moment ("2026-03-01 09:00 UTC"), or hide it (None)."""
        self.setVisible(text is not None)
        if text is not None:
            self.label.setText(
                f"<b>Viewing as of {text}</b> — the notes as they stood then. Nothing can "
                "be changed until you return to now."
            )


class ReadOnlyBanner(QFrame):
    """Says, above everything, that the store opened read-only (issue 17 item 12): its file
    or folder cannot be written, so nothing can be changed."""

    TEXT = (
        "<b>Read-only</b> — this store's file or folder cannot be written (a copy on "
        "read-only media, say), so it opened read-only: you can look at everything, and "
        "nothing can be changed. To change it, copy it with its .checkpoint file to a folder "
        "you can write to."
    )

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("readOnlyBanner")
        self.setStyleSheet(
            "#readOnlyBanner { background: rgba(120, 160, 255, 0.25);"
            " border: 1px solid rgba(80, 110, 200, 0.8); border-radius: 4px; }"
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        self.label = QLabel(self.TEXT)
        self.label.setWordWrap(True)  # never widens the window
        self.label.setAccessibleName("Read-only store")
        layout.addWidget(self.label, 1)
        self.setVisible(False)

    def text(self) -> str:
        """What it says."""
        return self.label.text()
