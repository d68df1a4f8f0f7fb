"""A person's conversations and their transcripts, with turn anchors for provenance."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from engram.model.conversation import ConversationInfo, EntryKind, LogEntry

CONVERSATION_ROLE = Qt.ItemDataRole.UserRole + 2


class ConversationsPanel(QWidget):
    """List on the left, transcript on the right."""

    conversation_selected = Signal(str)
    delete_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        split = QSplitter()
        self.list = QListWidget()
        self.list.setAccessibleName("Conversations")
        self.transcript = QTextBrowser()
        self.transcript.setAccessibleName("Transcript")
        split.addWidget(self.list)
        split.addWidget(self.transcript)
        split.setSizes([300, 700])
        layout.addWidget(split, 1)
        row = QHBoxLayout()
        self.delete_button = QPushButton("Delete conversation…")
        self.delete_button.setAccessibleName("Delete the selected conversation")
        self.delete_button.setEnabled(False)
        row.addStretch(1)
        row.addWidget(self.delete_button)
        layout.addLayout(row)
        self.list.currentItemChanged.connect(self._changed)
        self.delete_button.clicked.connect(self._delete)
        self.highlight: str | None = None

    def show_conversations(self, infos: Sequence[ConversationInfo]) -> None:
        """Fill the list."""
        self.list.clear()
        self.transcript.clear()
        for info in infos:
            flags = " · incognito" if info.incognito else ""
            label = (
                f"{info.created_at:%Y-%m-%d %H:%M} · {info.surface.value}{flags}\n"
                f"{', '.join(info.participants)} · {info.id}"
            )
            item = QListWidgetItem(label)
            item.setData(CONVERSATION_ROLE, info.id)
            item.setToolTip("Readers: " + ", ".join(info.participants))
            self.list.addItem(item)

    def select(self, conversation: str, turn: str | None = None) -> bool:
        """Select a conversation (and remember which turn to show); False if not listed."""
        self.highlight = turn or None
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(CONVERSATION_ROLE) == conversation:
                if self.list.currentRow() == row:
                    self.conversation_selected.emit(conversation)
                self.list.setCurrentRow(row)
                return True
        return False

    def current(self) -> str | None:
        """The selected conversation id."""
        item = self.list.currentItem()
        return None if item is None else str(item.data(CONVERSATION_ROLE))

    def show_transcript(self, entries: Sequence[tuple[LogEntry, str | None]]) -> None:
        """Render turns with anchors; scroll to the highlighted turn."""
        e = html.escape
        parts = []
        for entry, text in entries:
            mark = entry.ref == self.highlight and self.highlight is not None
            style = "background: rgba(255, 200, 0, 0.35);" if mark else ""
            when = f"{entry.at:%Y-%m-%d %H:%M}"
            if entry.kind is EntryKind.TOOL_CALL:
                head = f"⚙ {e(str(entry.body.get('name')))} called"
                body = f"<tt>{e(text or '')}</tt>"
            elif entry.kind is EntryKind.TOOL_RESULT:
                head = f"⚙ {e(str(entry.body.get('name')))} returned"
                body = (
                    f"<tt>{e(text)}</tt>"
                    if text is not None
                    else "<i>[removed by an administrator — see below]</i>"
                )
            elif entry.kind is EntryKind.EXCISION:
                call = entry.body.get("call")
                what = f"the result of {e(str(call))}" if call else "content"
                head = f"✂ {e(entry.author or 'an administrator')} removed {what}"
                body = f"<i>Reason: {e(text or 'not given')}</i>"
            else:
                head = e(entry.author or entry.kind.value)
                body = e(text) if text is not None else "<i>[removed]</i>"
            parts.append(
                f"<a name='{e(entry.ref or '')}'></a>"
                f"<p style='{style}'><b>{head}</b> "
                f"<span style='color:gray'>{when} · {e(entry.ref or '')}</span><br>{body}</p>"
            )
        self.transcript.setHtml("".join(parts) or "<p>No turns.</p>")
        if self.highlight:
            self.transcript.scrollToAnchor(self.highlight)

    def _changed(self, current: QListWidgetItem | None, _previous: object) -> None:
        self.delete_button.setEnabled(current is not None)
        if current is not None:
            self.conversation_selected.emit(str(current.data(CONVERSATION_ROLE)))

    def _delete(self) -> None:
        conversation = self.current()
        if conversation:
            self.delete_requested.emit(conversation)

    def clear(self) -> None:
        """Forget what was shown (locking)."""
        self.list.clear()
        self.transcript.clear()
