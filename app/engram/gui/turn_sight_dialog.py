""" "What did the agent see?": the block an assistant turn got, from the usage ledger.

Layout only: control.turn_block rebuilds what the turn got; this shows it — the block as
the model read it, each note with its rank, what was dropped and why, the audience and the
budget — with links that select a note in the inspector.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from engram.control.turn_block import SeenBlock, SeenNote, TurnSight

NOTE_LINK = "note:"
FIT_WIDTH = 720
SECTIONS = {
    "language": "language",
    "tone": "tone",
    "preferences": "preference",
    "notes": "note",
}


def _e(text: object) -> str:
    return html.escape(str(text))


def _note_link(note: str | None, text: str | None) -> str:
    shown = _e(text) if text is not None else "<i>[text erased with its conversation]</i>"
    if not note:
        return shown
    return f"<a href='{NOTE_LINK}{_e(note)}' title='{_e(note)}'>{shown}</a>"


def _status(seen: SeenNote) -> str:
    if seen.status is None:
        return "gone"
    return "holds now" if seen.status == "active" else f"{seen.status} since"


def _placed(block: SeenBlock) -> str:
    if not block.placed:
        return "<p>No note went into this block.</p>"
    rows = "".join(
        f"<tr><td align='right'>{p.rank or '–'}</td><td>{_e(SECTIONS.get(p.section, p.section))}"
        f"</td><td>{_note_link(p.note, p.text)}</td><td>{_e(_status(p))}</td></tr>"
        for p in block.placed
    )
    return (
        "<table cellspacing='0' cellpadding='3'>"
        "<tr><th align='right'>Rank</th><th align='left'>As</th><th align='left'>Note</th>"
        "<th align='left'>Now</th></tr>"
        f"{rows}</table>"
    )


def _dropped(block: SeenBlock) -> str:
    if not block.complete:
        return "<p>This turn was recorded before Engram kept what was left out.</p>"
    if not block.dropped:
        return "<p>Nothing was left out: everything eligible fitted.</p>"
    rows = "".join(
        f"<li>{_note_link(d.note, d.text) if d.note else _e(d.what)} — {_e(_reason(d.reason))}</li>"
        for d in block.dropped
    )
    return f"<ul>{rows}</ul>"


def _reason(reason: str) -> str:
    if reason == "budget":
        return "no room left in the block's budget"
    return reason


def turn_sight_html(sight: TurnSight) -> str:
    """The dialog's page."""
    block = sight.block
    parts = [f"<h3>What the agent saw in this turn ({_e(sight.person)}'s memory)</h3>"]
    if block is None:
        parts.append(
            "<p>No memory block was recorded for this turn: memory was not assembled for "
            "it, or it happened before Engram kept what each turn was given.</p>"
        )
    else:
        used = f"{block.used:,}" if block.used is not None else "?"
        budget = f"{block.budget:,}" if block.budget is not None else "?"
        parts += [
            f"<p>{_e(sight.audience_sentence)}</p>",
            # The usage ledger's entry number only in the tooltip (issue 17 item 13).
            f"<p title='usage ledger entry {block.event}'>Assembled "
            f"{block.at:%Y-%m-%d %H:%M} · {used} of {budget} characters used</p>",
        ]
        if not block.readable:
            parts.append(
                "<p><b>The notes could not be read that turn; it went on without them.</b></p>"
            )
        if block.text is not None:
            parts.append(
                "<p><b>The block, exactly as the model got it:</b></p>"
                "<pre style='background-color: rgba(127,127,127,0.12); padding: 6px;"
                f" white-space: pre-wrap'>{_e(block.text) or '(empty)'}</pre>"
            )
        else:
            parts.append(f"<p><i>{_e(block.why_no_text)}</i></p>")
        parts += ["<p><b>Notes in the block, by rank</b></p>", _placed(block)]
        parts += ["<p><b>Left out, and why</b></p>", _dropped(block)]
        if block.digest:
            lines = "".join(
                f"<li>{_e(t) if t is not None else '<i>[erased with its conversation]</i>'}</li>"
                for t in block.digest
            )
            parts.append(f"<p><b>Recent-conversation lines in the block</b></p><ul>{lines}</ul>")
    for answer in sight.tools:
        notes = "".join(
            f"<li>{n.rank}. {_note_link(n.note, n.text)} ({_e(_status(n))})</li>"
            for n in answer.notes
        )
        parts.append(
            f"<p><b>Returned by memory {_e(answer.via)}</b> at {answer.at:%H:%M}</p>"
            f"<ol style='list-style: none'>{notes}</ol>"
        )
    return "".join(parts)


class TurnSightDialog(QDialog):
    """Shows what a turn got; choosing a note link closes it with that note chosen."""

    def __init__(self, sight: TurnSight, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("What did the agent see?")
        self.setMinimumSize(560, 480)
        self.chosen: str | None = None
        layout = QVBoxLayout(self)
        self.page = QTextBrowser()
        self.page.setAccessibleName("What the agent saw in this turn")
        self.page.setOpenLinks(False)
        self.page.anchorClicked.connect(self._link)
        self.page.setHtml(turn_sight_html(sight))
        layout.addWidget(self.page)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._fit(parent)

    def _fit(self, parent: QWidget | None) -> None:
        """Open tall enough for the block and its ranked notes, where the screen allows
        (at its minimum size only the block's first lines showed)."""
        screen = (parent or self).screen().availableGeometry()
        width = max(FIT_WIDTH if screen.width() > FIT_WIDTH else screen.width() * 9 // 10, 560)
        document = self.page.document()
        document.setTextWidth(width - 48)  # the page's frame and margins
        wanted = int(document.size().height()) + 80  # and the Close button
        self.resize(width, max(480, min(wanted, screen.height() * 85 // 100)))

    def _link(self, url: QUrl) -> None:
        target = url.toString()
        if target.startswith(NOTE_LINK):
            self.chosen = target.removeprefix(NOTE_LINK)
            self.accept()
