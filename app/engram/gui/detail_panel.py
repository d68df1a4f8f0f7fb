"""A note's detail: versions, what closed it, provenance links, confidence arithmetic, usage."""

from __future__ import annotations

import html
from datetime import datetime
from typing import Any

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from engram.control.wording import actor_named, day, percent
from engram.gui import theme
from engram.model.scope import Scope


def _when(value: str | None) -> str:
    return (value or "open")[:16].replace("T", " ")


def _badge(scope: str) -> str:
    color = theme.scope_color(Scope(scope)).name()
    fg = theme.badge_text_color(Scope(scope)).name()
    return (
        f'<span style="background:{color}; color:{fg}; padding:1px 6px;'
        f' border-radius:6px">&nbsp;{scope}&nbsp;</span>'
    )


def render_detail(detail: dict[str, Any], as_of: str | None = None) -> str:
    """HTML for one note's detail (the same dict `engram notes show --json` prints); with
    `as_of`, headed as the note as it stood at that moment."""
    e = html.escape
    text = detail["text"] if detail["text"] is not None else "[removed with its conversation]"
    parts = [_past(as_of)] if as_of else []
    parts += [
        f"<h3 style='margin-bottom:2px'>{e(text)}</h3>",
        f"<p>{_badge(detail['scope'])} &nbsp; {e(detail['kind'].replace('_', ' '))} · "
        f"{e(detail['durability'])} · <b>{e(detail['status'])}</b></p>",
        f"<p><b>Valid</b> {_when(detail['valid_from'])} → {_when(detail['valid_to'])}"
        f"<br><b>Recorded by</b> {_actor(detail['actor'])}</p>",
    ]
    closed = detail.get("closed_by")
    if closed:
        parts.append(f"<p>{closing_sentence(closed)}</p>")
    conf = detail["confidence"]
    corroborators = _corroborators(conf["corroborators"], detail["sources"])
    parts.append(
        f"<p><b>Confidence</b> {confidence_sentence(conf)}; corroborated by: {corroborators}</p>"
    )
    sources = detail["sources"]
    if sources:
        rows = "".join(
            f"<li><a href='turn:{e(s['conversation'])}/{e(s['turn'] or '')}'>"
            f"{'the turn' if s['turn'] else 'the conversation'} of {_day(s['at'])}</a> "
            f"<span style='color:gray'>{_when(s['at'])}</span></li>"
            for s in sources
        )
        parts.append(f"<p><b>Provenance</b></p><ul>{rows}</ul>")
    else:
        parts.append("<p><b>Provenance</b> the person's own note</p>")
    versions = detail["versions"]
    if len(versions) > 1:
        rows = "".join(
            f"<li>{'<b>' if v['id'] == detail['id'] else ''}"
            f"<a href='note:{e(v['id'])}'>{e(v['text'] or '[removed]')}</a> "
            f"[{e(v['status'].replace('_', ' '))}] <span style='color:gray'>"
            f"{_when(v['valid_from'])} → {_when(v['valid_to'])}</span>"
            f"{'</b>' if v['id'] == detail['id'] else ''}</li>"
            for v in versions
        )
        parts.append(f"<p><b>Versions</b></p><ol>{rows}</ol>")
    parts.append(disclosed_html(detail.get("disclosed") or []))
    history = "".join(
        f"<li>{_when(h['at'])} · {e(h['type'].replace('_', ' '))} · {_actor(h['actor'])}</li>"
        for h in detail["history"]
    )
    parts.append(f"<p><b>History</b></p><ul>{history}</ul>")
    return "".join(parts)


def disclosed_html(uses: list[dict[str, Any]]) -> str:
    """Disclosed to (issue 21 item 6): every turn, audience and agent that received the
    note, newest first, each with "What did the agent see?"; ids only in tooltips."""
    e = html.escape
    if not uses:
        return "<p><b>Disclosed to</b> nobody yet: no agent has been given this note</p>"
    rows = []
    for u in reversed(uses):
        agent = f"the agent {u['agent']}" if u.get("agent") else "an agent with no name recorded"
        if u.get("conversation_kept"):
            tip = f"conversation {u['conversation']}" + (f", turn {u['turn']}" if u["turn"] else "")
            where = (
                f"<a href='turn:{e(u['conversation'])}/{e(u['turn'] or '')}' title='{e(tip)}'>"
                f"{'a turn' if u['turn'] else 'the conversation'} of the chat of "
                f"{e(u['conversation_day'])}</a>"
            )
            who = f"; who could read the answer: {e(u['readers'])}"
        elif u.get("conversation"):
            where, who = "a chat since deleted", ""
        else:
            where, who = "a session with no conversation", ""
        sight = (
            f" · <a href='sight:{e(u['conversation'])}/{e(u['turn'])}'>What did the agent see?</a>"
            if u.get("seen")
            else ""
        )
        rows.append(
            f"<li>{_when(u['at'])} · {e(u['how'])} (ranked {u['rank']}) · {e(agent)} · in "
            f"{where}{who}{sight}</li>"
        )
    return (
        f"<p><b>Disclosed to</b> {len(uses)} time{'s' if len(uses) != 1 else ''}</p>"
        f"<ul>{''.join(rows)}</ul>"
    )


def _actor(actor: str) -> str:
    """Who, in words; the id in the tooltip."""
    return f"<span title='{html.escape(actor)}'>{html.escape(actor_named(actor))}</span>"


def confidence_sentence(conf: dict[str, Any]) -> str:
    """The confidence arithmetic (F3) in percentages, not basis points: "75% — 70% to begin
    with, + 5% for each other conversation that confirmed it (1), at most 100%"."""
    count = len(conf["corroborators"])
    capped = conf["uncapped_bp"] > conf["cap_bp"]
    return (
        f"{percent(conf['confidence_bp'])} — {percent(conf['initial_bp'])} to begin with, "
        f"+ {percent(conf['per_corroborator_bp'])} for each other conversation that confirmed "
        f"it ({count}), at most {percent(conf['cap_bp'])}" + (" (reached)" if capped else "")
    )


CLOSURES = {
    "contradicted": "a contradiction",
    "corrected": "a correction",
    "deleted": "a deletion",
    "merged": "a merge",
    "retired": "retirement",
    "duplicate_removed": "a duplicate removed",
    "conversation_deleted": "its conversation deleted",
    "scope_changed": "a change of scope",
}


def _corroborators(conversations: list[str], sources: list[dict[str, Any]]) -> str:
    """The conversations that confirmed a note, by the day it was said there ("the
    conversations of 18 Oct and 26 Oct"); their ids in the tooltip."""
    if not conversations:
        return "none yet"
    said = {s["conversation"]: _day(s["at"]) for s in reversed(sources)}  # the first time
    days = [said.get(c, "a day no longer on record") for c in conversations]
    listed = days[0] if len(days) == 1 else f"{', '.join(days[:-1])} and {days[-1]}"
    ids = html.escape(", ".join(conversations))
    noun = "conversation" if len(days) == 1 else "conversations"
    return f"<span title='{ids}'>the {noun} of {listed}</span>"


def _day(value: str | None) -> str:
    if not value:
        return "an unknown day"
    return day(datetime.fromisoformat(value.replace("Z", "+00:00")))


def closing_sentence(closed: dict[str, Any]) -> str:
    """What closed a note, as a person says it: "Closed by 'Lives in Grenoble.' — a
    contradiction, 3 Nov" (the closing note's id in a link, the evidence linked)."""
    e = html.escape
    what = CLOSURES.get(closed["type"], closed["type"].replace("_", " "))
    by_note = closed.get("note")
    words = closed.get("note_text")
    if by_note:
        shown = f"‘{e(words)}’" if words else "a later note"
        by = f"by <a href='note:{e(by_note)}'>{shown}</a> — {e(what)}"
    else:
        by = f"— {e(what)}"
    cause = closed.get("cause") or {}
    evidence = ""
    if cause.get("conversation"):
        evidence = (
            f" (<a href='turn:{e(cause['conversation'])}/{e(cause.get('turn') or '')}'>"
            "what was said</a>)"
        )
    return (
        f"<b>Closed</b> {by}, {_day(closed['at'])}{evidence}"
        f"<br><span style='color:gray'>by {_actor(closed['actor'])}</span>"
    )


def _past(as_of: str) -> str:
    return (
        "<p style='background: rgba(255, 190, 0, 0.28); padding: 4px'>"
        f"<b>As it stood on {html.escape(as_of)}</b> — not as it is now.</p>"
    )


NOTHING_CHOSEN = "Select a note to see its history and provenance."


class DetailPanel(QWidget):
    """Shows one note; asks the controller to act on it."""

    edit_requested = Signal()
    scope_requested = Signal()
    delete_requested = Signal()
    turn_requested = Signal(str, str)
    note_requested = Signal(str)
    sight_requested = Signal(str, str)  # "What did the agent see?" of a conversation's turn

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.heading = QLabel(NOTHING_CHOSEN)
        self.heading.setWordWrap(True)
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.setAccessibleName("Note detail")
        self.browser.anchorClicked.connect(self._follow)
        buttons = QHBoxLayout()
        self.edit_button = QPushButton("&Edit text…")
        self.scope_button = QPushButton("Change &scope…")
        self.delete_button = QPushButton("&Delete…")
        for button, signal, name in (
            (self.edit_button, self.edit_requested, "Edit the note's text"),
            (self.scope_button, self.scope_requested, "Change the note's scope"),
            (self.delete_button, self.delete_requested, "Delete the note"),
        ):
            button.setAccessibleName(name)
            button.clicked.connect(signal.emit)
            buttons.addWidget(button)
        layout.addWidget(self.heading)
        layout.addWidget(self.browser, 1)
        layout.addLayout(buttons)
        self.show_detail(None)

    def show_detail(self, detail: dict[str, Any] | None, as_of: str | None = None) -> None:
        """Fill the panel (None: nothing selected). With `as_of` it shows the past, and
        nothing in it can be changed."""
        self.detail = detail
        self.as_of = as_of
        editable = detail is not None and detail["status"] == "active" and as_of is None
        for button in (self.edit_button, self.scope_button, self.delete_button):
            button.setEnabled(editable)
        if detail is None:
            self.heading.setText(NOTHING_CHOSEN)
            self.heading.setVisible(True)
            self.browser.setHtml("")
            return
        self.heading.setVisible(False)
        self.browser.setHtml(render_detail(detail, as_of))

    def hold(self) -> None:
        """Another note was chosen and its detail is on its way: nothing here acts on the
        one still shown."""
        for button in (self.edit_button, self.scope_button, self.delete_button):
            button.setEnabled(False)

    def show_loading(self) -> None:
        """The chosen note's detail is slow to come (a long job is running): stop showing
        the note chosen before."""
        self.show_detail(None)
        self.heading.setText("Loading the chosen note…")

    def show_absent(self, as_of: str) -> None:
        """The selected note did not exist yet at the moment time travel shows."""
        self.show_detail(None)
        self.heading.setVisible(False)
        self.browser.setHtml(_past(as_of) + "<p>This note did not exist yet at that moment.</p>")

    def _follow(self, url: QUrl) -> None:
        target = url.toString()
        if target.startswith("turn:"):
            conversation, _, turn = target.removeprefix("turn:").partition("/")
            self.turn_requested.emit(conversation, turn)
        elif target.startswith("sight:"):
            conversation, _, turn = target.removeprefix("sight:").partition("/")
            self.sight_requested.emit(conversation, turn)
        elif target.startswith("note:"):
            self.note_requested.emit(target.removeprefix("note:"))
