"""Candidate review: what learning suggested, and the decisions (P5, P6).

Each decision carries the revision the reviewer is looking at; if someone else decided
first, the controller reports the conflict and reloads, so nobody overwrites anyone.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from engram.control.wording import actor_named, quoted
from engram.gui.widgets import offer
from engram.model.sensitivity import label as category_label

COLUMNS = ("Status", "Rev", "Kind", "Flags", "Text")
STATUS_CHOICES = (
    ("Pending", "pending"),
    ("Approved", "approved"),
    ("Rejected", "rejected"),
    ("Applied", "applied"),
    ("All", None),
)
ID_ROLE = Qt.ItemDataRole.UserRole + 1
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


class CandidatesPanel(QWidget):
    """A table of candidates, the chosen one's details and trail, and the decisions."""

    status_changed = Signal()
    candidate_selected = Signal(str)
    approve_requested = Signal(str, int, bool)  # id, revision, apply right after
    reject_requested = Signal(str, int)
    apply_requested = Signal(str)
    turn_requested = Signal(str, str)  # conversation, turn
    approve_edit_requested = Signal(str, int)  # id, revision: approve as edited (E)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[dict[str, Any]] = []
        # Why no decision can be made ("" when one can): time travel, a read-only store.
        self.past: bool | str = False
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        top.addWidget(QLabel("Show"))
        self.status = QComboBox()
        self.status.setAccessibleName("Which candidates to show")
        for label, value in STATUS_CHOICES:
            self.status.addItem(label, value)
        self.status.currentIndexChanged.connect(lambda _i: self.status_changed.emit())
        top.addWidget(self.status)
        top.addStretch(1)
        self.summary = QLabel("")
        top.addWidget(self.summary)
        layout.addLayout(top)

        split = QSplitter(Qt.Orientation.Vertical)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setAccessibleName("Candidates")
        self.table.setToolTip("What learning suggested; choose one to see it and decide")
        self.table.setTabKeyNavigation(False)  # Tab leaves the table
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        for column, width in enumerate((84, 44, 96, 130)):
            header.resizeSection(column, width)
        header.model().setHeaderData(  # a number: right-aligned, like its cells
            1, Qt.Orientation.Horizontal, RIGHT, Qt.ItemDataRole.TextAlignmentRole
        )
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        split.addWidget(self.table)
        self.details = QTextBrowser()
        self.details.setAccessibleName("Candidate details and decisions")
        self.details.setOpenLinks(False)
        self.details.anchorClicked.connect(self._link)
        split.addWidget(self.details)
        split.setSizes([320, 220])
        layout.addWidget(split, 1)

        buttons = QHBoxLayout()
        self.approve_button = QPushButton("&Approve")
        self.approve_apply_button = QPushButton("Approve and a&pply")
        self.reject_button = QPushButton("&Reject…")
        self.apply_button = QPushButton("Appl&y")
        self.approve_edit_button = QPushButton("Approve with &edit…")
        for button, name in (
            (self.approve_button, "Approve the selected candidate"),
            (self.approve_apply_button, "Approve the selected candidate and make it a note"),
            (
                self.approve_edit_button,
                "Approve the selected candidate as you edit its text or scope, and make it a note",
            ),
            (self.reject_button, "Reject the selected candidate, saying why"),
            (self.apply_button, "Make the approved candidate a note"),
        ):
            button.setAccessibleName(name)
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.approve_button.clicked.connect(lambda: self._decide("approve"))
        self.approve_apply_button.clicked.connect(lambda: self._decide("approve-apply"))
        self.reject_button.clicked.connect(lambda: self._decide("reject"))
        self.apply_button.clicked.connect(lambda: self._decide("apply"))
        self.approve_edit_button.clicked.connect(lambda: self._decide("approve-edit"))
        # The review queue (issue 21 item 8): single keys while the list has the focus.
        self.table.setToolTip(
            "What learning suggested. A approves, R rejects (saying why), E approves with an "
            "edit, J and K move down and up"
        )
        for key, act in (
            ("A", lambda: self._decide("approve")),
            ("R", lambda: self._decide("reject")),
            ("E", lambda: self._decide("approve-edit")),
            ("J", lambda: self._move(1)),
            ("K", lambda: self._move(-1)),
        ):
            shortcut = QShortcut(QKeySequence(key), self.table)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
            shortcut.activated.connect(act)
        self._update_buttons()

    def chosen_status(self) -> str | None:
        """The status filter."""
        value = self.status.currentData()
        return str(value) if value else None

    def current(self) -> dict[str, Any] | None:
        """The selected candidate's row."""
        row = self.table.currentRow()
        return self.rows[row] if 0 <= row < len(self.rows) else None

    def show_candidates(
        self, rows: list[dict[str, Any]], pending: int, keep: str | None = None
    ) -> None:
        """Fill the table, keeping the selection on `keep`, or else on the same candidate
        where it remains; the selected one's details reload either way."""
        keep = keep or (self.current() or {}).get("id")
        was_at = self.table.currentRow()  # a decided one leaves: the next takes its place
        self.rows = rows
        self.table.setRowCount(len(rows))
        for r, c in enumerate(rows):
            flags = " ".join(
                category_label(c.get("category")) if f == "sensitive" else f
                for f in ("sensitive", "ambiguous")
                if c[f]
            )
            kind = c["kind"].replace("_", " ")
            cells = (c["status"], str(c["revision"]), kind, flags, c["text"] or "[text gone]")
            for column, value in enumerate(cells):
                item = QTableWidgetItem(value)
                item.setData(ID_ROLE, c["id"])
                if column == 1:
                    item.setTextAlignment(RIGHT)
                self.table.setItem(r, column, item)
        self.summary.setText(f"{pending} waiting for review")
        fallback = min(max(was_at, 0), len(rows) - 1)
        row = next((i for i, c in enumerate(rows) if c["id"] == keep), fallback)
        blocked = self.table.blockSignals(True)
        self.table.setCurrentCell(row, 0)
        self.table.blockSignals(blocked)
        self.table.viewport().update()
        if row < 0:
            self.details.setHtml("<p>No candidates here.</p>")
        self._selection_changed()

    def clear(self) -> None:
        """Forget what was shown (locking, another person)."""
        self.rows = []
        self.table.setRowCount(0)
        self.summary.setText("")
        self.details.clear()
        self._update_buttons()

    def show_trail(self, candidate: dict[str, Any], trail: list[dict[str, Any]]) -> None:
        """The chosen candidate in full, with every decision about it."""
        e = html.escape
        source = candidate.get("source") or {}
        link = ""
        if source.get("conversation") and source.get("turn"):
            href = f"turn:{source['conversation']}/{source['turn']}"
            link = f' — <a href="{e(href)}">open the turn it came from</a>'
        relation = imported_from(candidate)
        # The notes it touches by their words; their ids in the tooltip (issue 17 item 13).
        if candidate.get("contradicts"):
            named = _note_named(candidate["contradicts"], candidate.get("contradicts_text"))
            relation += f"<p>Replaces the note {named} if applied.</p>"
        elif candidate.get("restates"):
            named = _note_named(candidate["restates"], candidate.get("restates_text"))
            relation += f"<p>Restates the note {named}.</p>"
        twins = candidate.get("duplicates") or []
        if twins:  # issue 21 item 8: applying it would keep the same thing twice
            named = ", ".join(_note_named(d["id"], d["text"]) for d in twins)
            relation += f"<p>Would duplicate the note {named}, which already says this.</p>"
        warnings = []
        if candidate["sensitive"]:
            warnings.append(sensitive_warning(candidate))
        if candidate["ambiguous"]:
            warnings.append("was said with hedging")
        caution = f"<p><b>Review with care:</b> {e(', '.join(warnings))}.</p>" if warnings else ""
        if candidate.get("automatic_policy"):
            caution += f"<p>{e(candidate['automatic_policy'])}</p>"
        rows = "".join(
            f"<tr><td>{e(t['at'][:19].replace('T', ' '))}</td>"
            f"<td title='{e(t['actor'])}'>{e(actor_named(t['actor']))}</td>"
            f"<td>{e(t['event'].replace('candidate_', ''))}"
            f"{' ' + e(t['decision']) if t.get('decision') else ''}"
            f"{' — “' + e(t['reason']) + '”' if t.get('reason') else ''}</td></tr>"
            for t in trail
        )
        self.details.setHtml(
            f"<h3>{e(candidate['text'] or '[text gone]')}</h3>"
            f"<p>{e(candidate['kind'].replace('_', ' '))} · {e(candidate['scope'])} · "
            f"confidence {candidate['confidence_bp'] / 100:.0f}% · revision "
            f"{candidate['revision']} · "
            f"{e(candidate['status'])}{link}</p>{relation}{caution}"
            f"<table cellspacing='6'>{rows}</table>"
        )

    def _selection_changed(self) -> None:
        self._update_buttons()
        candidate = self.current()
        if candidate:
            self.candidate_selected.emit(candidate["id"])

    def set_past(self, past: bool | str) -> None:
        """Time travel on (True) or off: decisions change the store, so not in the past."""
        self.past = past
        self._update_buttons()

    def _update_buttons(self) -> None:
        status = (self.current() or {}).get("status")
        for button in (
            self.approve_button,
            self.approve_apply_button,
            self.reject_button,
            self.approve_edit_button,
        ):
            offer(button, status == "pending", self.past)
        offer(self.apply_button, status == "approved", self.past)

    def _move(self, step: int) -> None:
        """J and K: the next or previous candidate."""
        row = self.table.currentRow() + step
        if 0 <= row < self.table.rowCount():
            self.table.setCurrentCell(row, 0)

    def _decide(self, what: str) -> None:
        candidate = self.current()
        if candidate is None:
            return
        if what != "apply" and candidate["status"] != "pending":
            return  # a key pressed on a decided one: nothing to decide (its buttons are off)
        if self.past:
            return
        cid, revision = candidate["id"], int(candidate["revision"])
        if what == "approve-edit":
            self.approve_edit_requested.emit(cid, revision)
        elif what == "reject":
            self.reject_requested.emit(cid, revision)
        elif what == "apply":
            self.apply_requested.emit(cid)
        else:
            self.approve_requested.emit(cid, revision, what == "approve-apply")

    def _link(self, url: QUrl) -> None:
        target = url.toString()
        if target.startswith("turn:"):
            conversation, _, turn = target[5:].partition("/")
            self.turn_requested.emit(conversation, turn)


def _note_named(note: str, text: str | None) -> str:
    """A note a suggestion touches, by its words (its id in the tooltip)."""
    return f"<span title='{html.escape(note)}'>{html.escape(quoted(text))}</span>"


def sensitive_warning(candidate: dict[str, Any]) -> str:
    """P5: which sensitive category a candidate touches, and the extractor's reason."""
    said = f"touches a sensitive topic: {category_label(candidate.get('category'))}"
    reason = candidate.get("sensitivity_reason")
    return f"{said} ({reason})" if reason else said


def imported_from(candidate: dict[str, Any]) -> str:
    """Where a memory imported from elsewhere came from (issue 21 item 10), as a paragraph;
    "" for anything else."""
    where = candidate.get("imported")
    if not where:
        return ""
    said = f"Imported from {where.get('file', 'a file')}"
    if where.get("source"):
        said += f", kept by {where['source']}"
    if where.get("line"):
        said += f", line {where['line']}"
    if where.get("heading"):
        said += f", under “{where['heading']}”"
    if where.get("created_at"):
        said += f", first kept there {str(where['created_at'])[:10]}"
    if where.get("categories"):
        said += f", filed there as {', '.join(map(str, where['categories']))}"
    said += f", on {str(where.get('imported_at', ''))[:10]}." if where.get("imported_at") else "."
    tip = f" title='mem0 id {html.escape(str(where['mem0_id']))}'" if where.get("mem0_id") else ""
    return f"<p{tip}>{html.escape(said)}</p>"
