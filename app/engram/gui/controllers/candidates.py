"""The candidates tab: what learning suggested, and the reviewer's decisions (P5, P6)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal

from engram.control import candidate_review
from engram.control import candidates as candidate_control
from engram.control.session import PersonSession
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.panel import PanelController
from engram.gui.tasks import TaskContext
from engram.model.scope import Scope


class CandidatesController(PanelController):
    """Loads when shown; every decision carries the revision on screen."""

    candidates_shown = Signal()

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.tab = self.w.candidates
        c = self.w.candidates
        c.status_changed.connect(self.refresh)
        # The count on the tab is in view from every tab: it follows every change at once.
        hub.session_changed.connect(self._count_pending)
        hub.changed.connect(lambda _what: self._count_pending())
        c.candidate_selected.connect(self._show_candidate)
        c.approve_requested.connect(self.approve)
        c.reject_requested.connect(self.reject)
        c.apply_requested.connect(self.apply)
        c.approve_edit_requested.connect(self.approve_edited)
        hub.past_changed.connect(lambda _past: c.set_past(hub.frozen))

    def clear(self) -> None:
        self.w.candidates.clear()

    def _show_count(self, pending: int | None) -> None:
        tabs = self.w.tabs
        label = "Ca&ndidates" if not pending else f"Ca&ndidates ({pending})"
        index = tabs.indexOf(self.w.candidates)
        if tabs.tabText(index) != label:  # setting it anyway lays out and repaints every tab
            tabs.setTabText(index, label)

    def _count_pending(self) -> None:
        session = self.hub.session
        self._show_count(None)
        if session is not None:
            self.hub.run(
                lambda _: candidate_control.count_candidates(session, "pending"),
                self._show_count,
                background=True,
            )

    def show_candidate(self, candidate_id: str) -> None:
        """Show one candidate, whatever its status (an audit row leads here)."""
        c = self.w.candidates
        blocked = c.status.blockSignals(True)
        c.status.setCurrentIndex(c.status.findData(None))  # every status
        c.status.blockSignals(blocked)
        self.stale = False  # showing the tab must not list it once more without `keep`
        self.w.tabs.setCurrentWidget(c)
        self.refresh(keep=candidate_id)

    def show_pending(self, candidate_id: str) -> None:
        """Show a candidate back in the queue (its decision undone), selected among the
        pending ones."""
        c = self.w.candidates
        blocked = c.status.blockSignals(True)
        c.status.setCurrentIndex(c.status.findData("pending"))
        c.status.blockSignals(blocked)
        self.stale = False
        self.w.tabs.setCurrentWidget(c)
        self.refresh(keep=candidate_id)

    def refresh(self, keep: str | None = None) -> None:
        """List the candidates the filter asks for. With `keep`, that candidate stays listed
        and selected even if the filter no longer matches it (a conflict: the reviewer sees
        what it became and who decided)."""
        session = self.hub.session
        if session is None:
            return
        status = self.w.candidates.chosen_status()
        shown = [c["id"] for c in self.w.candidates.rows]
        position = shown.index(keep) if keep in shown else 0

        def work(_: TaskContext) -> tuple[list[dict[str, Any]], int]:
            rows = candidate_control.list_candidates(session, status)
            if keep is not None and keep not in [c["id"] for c in rows]:
                rows.insert(
                    min(position, len(rows)), candidate_control.get_candidate(session, keep)
                )
            pending = candidate_control.count_candidates(session, "pending")
            return rows, pending

        def done(result: tuple[list[dict[str, Any]], int]) -> None:
            rows, pending = result
            self.w.candidates.show_candidates(rows, pending, keep)
            self._show_count(pending)
            self.candidates_shown.emit()

        self.hub.run(work, done)

    def _show_candidate(self, candidate_id: str) -> None:
        session = self.hub.session
        if session is None:
            return

        def work(_: TaskContext) -> tuple[dict[str, Any], list[dict[str, Any]]]:
            candidate = candidate_control.get_candidate(session, candidate_id)
            if candidate["status"] == "pending":  # what applying it would keep twice
                candidate["duplicates"] = candidate_review.duplicates_of(session, candidate)
            return candidate, candidate_control.audit(session, candidate_id)

        self.hub.run(work, lambda result: self.w.candidates.show_trail(*result))

    def _decide(self, what: str, candidate: str, fn: Callable[[PersonSession], Any]) -> None:
        """Run a decision; on a conflict (someone decided first) the candidate reloads, still
        selected, showing its new state and who decided, and the conflict is said."""
        session = self.hub.session
        if session is None:
            return

        def failed(message: str) -> None:
            self.refresh(keep=candidate)
            self.hub.fail(message)

        self.hub.act(lambda: fn(session), what, on_error=failed)

    def approve(self, candidate_id: str, revision: int, apply_now: bool) -> None:
        """Approve the revision on screen (and apply it right away if asked)."""
        self._decide(
            "Candidate approved and applied." if apply_now else "Candidate approved.",
            candidate_id,
            lambda s: candidate_control.approve(s, candidate_id, revision, apply_now=apply_now),
        )

    def reject(self, candidate_id: str, revision: int) -> None:
        """Reject the revision on screen, saying why."""
        if not self.hub.writable():
            return
        reason = self.hub.ask(lambda p: p.reject_reason(), "the candidate was not rejected.")
        if not reason:
            return
        self._decide(
            "Candidate rejected.",
            candidate_id,
            lambda s: candidate_control.reject(s, candidate_id, revision, reason),
        )

    def approve_edited(self, candidate_id: str, revision: int) -> None:
        """E: approve the revision on screen as the reviewer edits its text and scope, and
        make it a note, in one write (issue 21 item 8)."""
        shown = next((c for c in self.w.candidates.rows if c["id"] == candidate_id), None)
        if shown is None or not self.hub.writable():
            return
        text = self.hub.ask(lambda p: p.edit_text(shown["text"] or ""), "nothing was approved.")
        if text is None:
            return
        scope = self.hub.ask(
            lambda p: p.choose_scope(Scope(shown["scope"]), text), "nothing was approved."
        )
        if scope is None:
            return
        self._decide(
            "Candidate approved as edited, and applied.",
            candidate_id,
            lambda s: candidate_review.approve_edited(
                s, candidate_id, revision, text=text, scope=scope
            ),
        )

    def apply(self, candidate_id: str) -> None:
        """Make an approved candidate a note (a separate step, P6)."""
        self._decide(
            "Candidate applied.", candidate_id, lambda s: candidate_control.apply(s, candidate_id)
        )
