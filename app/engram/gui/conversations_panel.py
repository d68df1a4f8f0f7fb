"""A person's conversations and their transcripts, with turn anchors for provenance."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from PySide6.QtCore import QPoint, Qt, QUrl, Signal
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

from engram.gui.highlight import Spans, marked_html, matcher
from engram.gui.widgets import HTML_ROLE, HtmlDelegate, clear_on_escape, copy_id_menu, describe
from engram.model.conversation import ConversationInfo, EntryKind, LogEntry
from engram.runtime.response_items import shown_item

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
        describe(self.list, "Conversations", "The person's conversations (right-click: Copy id)")
        self.list.setWordWrap(True)
        copy_id_menu(self.list, lambda p: _role_at(self.list, p, CONVERSATION_ROLE))
        self.transcript = QTextBrowser()
        describe(
            self.transcript, "Transcript", "The conversation's turns; search matches are marked"
        )
        self.transcript.setOpenLinks(False)
        self.transcript.anchorClicked.connect(self._link)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        search = QHBoxLayout()
        self.query = QLineEdit()
        self.query.setPlaceholderText("Find in this conversation…")
        describe(
            self.query,
            "Find in this conversation",
            "Words to find (Enter searches, Esc clears); matches are marked",
        )
        self.query.setClearButtonEnabled(True)
        clear_on_escape(self.query, self.clear_search)
        self.mode = QComboBox()
        describe(
            self.mode,
            "Search mode",
            "Relevance finds words by their stems; Pattern matches a regular expression",
        )
        self.mode.addItem("Relevance", "relevance")
        self.mode.addItem("Pattern", "pattern")
        self.everywhere = QCheckBox("All conversations")
        describe(self.everywhere, "Search all of this person's conversations")
        search.addWidget(self.query, 1)
        search.addWidget(self.mode)
        search.addWidget(self.everywhere)
        right_layout.addLayout(search)
        self.results = QListWidget()
        describe(self.results, "Search results", "Choose a match to show it in the transcript")
        self.results.setMaximumHeight(140)
        self.results.setWordWrap(True)
        self.results.setItemDelegate(HtmlDelegate(self.results))
        copy_id_menu(self.results, lambda p: _role_at(self.results, p, TURN_ROLE))
        self.results.setVisible(False)
        right_layout.addWidget(self.results)
        right_layout.addWidget(self.transcript, 1)
        split.addWidget(self.list)
        split.addWidget(right)
        split.setSizes([300, 700])
        layout.addWidget(split, 1)
        row = QHBoxLayout()
        self.delete_button = QPushButton("Delete conversation…")
        describe(self.delete_button, "Delete the selected conversation")
        self.delete_button.setEnabled(False)
        row.addStretch(1)
        row.addWidget(self.delete_button)
        layout.addLayout(row)
        self.list.currentItemChanged.connect(self._changed)
        self.delete_button.clicked.connect(self._delete)
        self.query.returnPressed.connect(self._search)
        # A search re-runs when what it searches changes: its mode, all or one conversation.
        self.mode.currentIndexChanged.connect(lambda _i: self._search())
        self.everywhere.toggled.connect(lambda _on: self._search())
        self.results.itemActivated.connect(self._result_chosen)
        self.results.itemClicked.connect(self._result_chosen)
        self.highlight: str | None = None
        self.can_excise = False
        self.marks: Callable[[str], Spans] = matcher("", "relevance")
        self._entries: Sequence[tuple[LogEntry, str | None]] = ()
        self._searched_in: str | None = None

    def show_conversations(
        self, infos: Sequence[ConversationInfo], openings: Mapping[str, str] | None = None
    ) -> None:
        """Fill the list: each conversation by its date, its people and its first words
        (the id is in the tooltip and the "Copy id" menu)."""
        self.list.clear()
        self.transcript.clear()
        openings = openings or {}
        for info in infos:
            flags = " · incognito" if info.incognito else ""
            words = openings.get(info.id)
            first = f"“{_clip(words, FIRST_WORDS)}”" if words else "(no words left)"
            label = (
                f"{info.created_at:%d %b %Y, %H:%M} · {', '.join(info.participants)}{flags}\n"
                f"{first}"
            )
            item = QListWidgetItem(label)
            item.setData(CONVERSATION_ROLE, info.id)
            item.setToolTip(
                f"Conversation {info.id} ({info.surface.value})\n"
                f"Readers: {', '.join(info.participants)}"
            )
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

    def show_results(self, answer: dict[str, Any], query: str = "", mode: str = "") -> None:
        """Show what conversation_find returned (or its error): each match by its excerpt,
        the matched words marked, in the transcript too; turn ids only in tooltips."""
        self.results.clear()
        self.results.setVisible(True)
        if "error" in answer:
            self.results.addItem(answer["error"])
            return
        self.marks = matcher(query, mode or str(self.mode.currentData()))
        names = {
            str(self.list.item(r).data(CONVERSATION_ROLE)): self.list.item(r).text().split("\n")[0]
            for r in range(self.list.count())
        }
        for match in answer["matches"]:
            where = match.get("conversation")
            ref = match.get("turn_id") or match.get("call_id")  # a turn or a tool result
            excerpt = str(match["excerpt"])
            label = f"{names.get(where, where)} — " if where else ""
            item = QListWidgetItem(f"{label}{excerpt}")
            item.setData(
                HTML_ROLE,
                (f"<span style='color:gray'>{html.escape(label)}</span>" if label else "")
                + marked_html(excerpt, self.marks(excerpt)),
            )
            kind = "turn" if match.get("turn_id") else "tool result"
            item.setToolTip(f"{kind} {ref}" + (f" in conversation {where}" if where else ""))
            item.setData(TURN_ROLE, ref)
            item.setData(CONVERSATION_ROLE, where)
            self.results.addItem(item)
        if answer.get("hint"):
            self.results.addItem(answer["hint"])
        if self._entries:
            self.show_transcript(self._entries)  # mark the words there too

    def clear_search(self) -> None:
        """No search: hide the results and the marks."""
        self.results.clear()
        self.results.setVisible(False)
        self.marks = matcher("", "relevance")
        self._searched_in = None
        if self._entries:
            self.show_transcript(self._entries)

    def _search(self) -> None:
        conversation = self.current()
        query = self.query.text().strip()
        if not query:
            return
        self._searched_in = "*" if self.everywhere.isChecked() else conversation
        if self.everywhere.isChecked():
            self.person_search_requested.emit(query, str(self.mode.currentData()))
            return
        if conversation:
            self.search_requested.emit(conversation, query, str(self.mode.currentData()))

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
        tools = {
            str(entry.ref): str(entry.body.get("name"))
            for entry, _ in entries
            if entry.kind is EntryKind.TOOL_CALL and entry.ref and entry.body.get("name")
        }
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
            elif entry.kind is EntryKind.ITEM:
                if "of" in entry.body:
                    continue  # an agent session's copy of the entry above, less its text
                # An item Engram does not read (an agent's reasoning, a system message):
                # kept sealed for the agent's session, so shown as kept.
                what = e(str(entry.body.get("type") or "item"))
                head = f"⋯ {what} kept for {e(entry.author or 'the agent')}'s session"
                body = f"<tt>{e(shown_item(text))}</tt>" if text is not None else "<i>[removed]</i>"
            elif entry.kind is EntryKind.EXCISION:
                call = entry.body.get("call")
                tool = tools.get(str(call)) if call else None  # the tool's name, not the call id
                what = f"the result of {e(tool or 'a tool call')}" if call else "content"
                head = f"✂ {e(entry.author or 'an administrator')} removed {what}"
                body = f"<i>Reason: {e(text or 'not given')}</i>"
            else:
                head = e(entry.author or entry.kind.value)
                body = (
                    marked_html(text, self.marks(text)) if text is not None else "<i>[removed]</i>"
                )
                if entry.kind is EntryKind.ASSISTANT and entry.ref:
                    body += (
                        f"<br><a href='{SIGHT_LINK}{e(entry.ref)}' title='The memory block "
                        "this turn got, from the usage ledger'>What did the agent see?</a>"
                    )
            parts.append(
                f"<a name='{e(entry.ref or '')}'></a>"
                f"<p style='{style}'><b>{head}</b> "
                f"<span style='color:gray'>{when}</span><br>{body}</p>"
            )
        self.transcript.setHtml("".join(parts) or "<p>No turns.</p>")
        if self.highlight:
            self.transcript.scrollToAnchor(self.highlight)

    def rerender(self) -> None:
        """Show the transcript again (what it offers changed: time travel, say)."""
        if self._entries:
            self.show_transcript(self._entries)

    def _changed(self, current: QListWidgetItem | None, _previous: object) -> None:
        self.delete_button.setEnabled(current is not None)
        if current is not None:
            self.conversation_selected.emit(str(current.data(CONVERSATION_ROLE)))
            if self._searched_in not in (None, "*") and self.query.text().strip():
                self._search()  # the search's scope is this conversation: run it here

    def _delete(self) -> None:
        conversation = self.current()
        if conversation:
            self.delete_requested.emit(conversation)

    def clear(self) -> None:
        """Forget what was shown (locking)."""
        self._entries = ()
        self.clear_search()
        self.list.clear()
        self.transcript.clear()

    def reset_search(self) -> bool:
        """Empty the query and the results (another person); whether there was one."""
        had = bool(self.query.text() or self.everywhere.isChecked())
        for widget in (self.query, self.everywhere):
            widget.blockSignals(True)
        self.query.clear()
        self.everywhere.setChecked(False)
        for widget in (self.query, self.everywhere):
            widget.blockSignals(False)
        self.clear_search()
        return had


FIRST_WORDS = 70


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _role_at(view: QListWidget, point: QPoint, role: int) -> str | None:
    item = view.itemAt(point)
    value = item.data(role) if item is not None else None
    return str(value) if value else None
