"""A person's conversations and their transcripts, with turn anchors for provenance."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLineEdit,
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
TURN_ROLE = Qt.ItemDataRole.UserRole + 4
SIGHT_LINK = "sight:"


class ConversationsPanel(QWidget):
    """List on the left, transcript on the right."""

    conversation_selected = Signal(str)
    delete_requested = Signal(str)
    search_requested = Signal(str, str, str)  # conversation, query, mode
    person_search_requested = Signal(str, str)  # query, mode: across all conversations
    turn_requested = Signal(str, str)  # conversation, turn
    excise_requested = Signal(str, str)  # conversation, call id
    sight_requested = Signal(str, str)  # conversation, assistant turn: what did it see?

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        split = QSplitter()
        self.list = QListWidget()
        self.list.setAccessibleName("Conversations")
        self.transcript = QTextBrowser()
        self.transcript.setAccessibleName("Transcript")
        self.transcript.setOpenLinks(False)
        self.transcript.anchorClicked.connect(self._link)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        search = QHBoxLayout()
        self.query = QLineEdit()
        self.query.setPlaceholderText("Find in this conversation…")
        self.query.setAccessibleName("Find in this conversation")
        self.query.setClearButtonEnabled(True)
        self.mode = QComboBox()
        self.mode.setAccessibleName("Search mode")
        self.mode.addItem("Relevance", "relevance")
        self.mode.addItem("Pattern", "pattern")
        self.everywhere = QCheckBox("All conversations")
        self.everywhere.setAccessibleName("Search all of this person's conversations")
        search.addWidget(self.query, 1)
        search.addWidget(self.mode)
        search.addWidget(self.everywhere)
        right_layout.addLayout(search)
        self.results = QListWidget()
        self.results.setAccessibleName("Search results")
        self.results.setMaximumHeight(120)
        self.results.setVisible(False)
        right_layout.addWidget(self.results)
        right_layout.addWidget(self.transcript, 1)
        split.addWidget(self.list)
        split.addWidget(right)
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
        self.query.returnPressed.connect(self._search)
        self.mode.currentIndexChanged.connect(lambda _i: self._search())
        self.results.itemActivated.connect(self._result_chosen)
        self.results.itemClicked.connect(self._result_chosen)
        self.highlight: str | None = None
        self.can_excise = False
        self._entries: Sequence[tuple[LogEntry, str | None]] = ()

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

    def show_results(self, answer: dict[str, Any]) -> None:
        """Show what conversation_find returned (or its error)."""
        self.results.clear()
        self.results.setVisible(True)
        if "error" in answer:
            self.results.addItem(answer["error"])
            return
        for match in answer["matches"]:
            where = match.get("conversation")
            label = f"{where} · " if where else ""
            ref = match.get("turn_id") or match.get("call_id")  # a turn or a tool result
            item = QListWidgetItem(f"{label}{ref}  {match['excerpt']}")
            item.setData(TURN_ROLE, ref)
            item.setData(CONVERSATION_ROLE, where)
            self.results.addItem(item)
        if answer.get("hint"):
            self.results.addItem(answer["hint"])

    def _search(self) -> None:
        conversation = self.current()
        query = self.query.text().strip()
        if query and self.everywhere.isChecked():
            self.person_search_requested.emit(query, str(self.mode.currentData()))
            return
        if conversation and query:
            self.search_requested.emit(
                conversation, self.query.text().strip(), str(self.mode.currentData())
            )

    def _result_chosen(self, item: QListWidgetItem) -> None:
        turn = item.data(TURN_ROLE)
        where = item.data(CONVERSATION_ROLE)
        if turn and where and where != self.current():
            self.turn_requested.emit(str(where), str(turn))
        elif turn:
            self.highlight = str(turn)
            self.show_transcript(self._entries)

    def _link(self, url: QUrl) -> None:
        target = url.toString()
        conversation = self.current()
        if target.startswith("excise:") and conversation:
            self.excise_requested.emit(conversation, target.removeprefix("excise:"))
        elif target.startswith(SIGHT_LINK) and conversation:
            self.sight_requested.emit(conversation, target.removeprefix(SIGHT_LINK))

    def show_transcript(self, entries: Sequence[tuple[LogEntry, str | None]]) -> None:
        """Render turns with anchors; scroll to the highlighted turn."""
        self._entries = entries
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
                if text is not None and self.can_excise:
                    body += f" <a href='excise:{e(entry.ref or '')}'>remove this result…</a>"
            elif entry.kind is EntryKind.EXCISION:
                call = entry.body.get("call")
                what = f"the result of {e(str(call))}" if call else "content"
                head = f"✂ {e(entry.author or 'an administrator')} removed {what}"
                body = f"<i>Reason: {e(text or 'not given')}</i>"
            else:
                head = e(entry.author or entry.kind.value)
                body = e(text) if text is not None else "<i>[removed]</i>"
                if entry.kind is EntryKind.ASSISTANT and entry.ref:
                    body += (
                        f"<br><a href='{SIGHT_LINK}{e(entry.ref)}' title='The memory block "
                        "this turn got, from the usage ledger'>What did the agent see?</a>"
                    )
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
        self.results.clear()
        self.results.setVisible(False)
        self._entries = ()
        self.list.clear()
        self.transcript.clear()
