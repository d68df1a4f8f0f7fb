"""The audit tab: the person's journal as a log, and the store's integrity check."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal

from engram.control import forensics
from engram.control.wording import counted
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.panel import PanelController
from engram.gui.tasks import Task, TaskContext

AUDIT_ROWS = 1000  # the newest; `engram audit` and export give the whole journal
NOT_CHECKED = "integrity: not checked"


class AuditController(PanelController):
    """Loads the log when shown; verify runs with progress and Cancel."""

    audit_shown = Signal()
    verified = Signal(bool)

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.tab = self.w.audit
        self._verify_task: Task | None = None
        self.w.verify_action.triggered.connect(self.verify)
        self.w.audit.verify_requested.connect(self.verify)
        self.w.audit.cancel_requested.connect(self.cancel_verify)
        hub.changed.connect(self._integrity_unknown)

    def _integrity_unknown(self, _what: str = "") -> None:
        """The store changed since any verify: its verdict no longer speaks for it."""
        if self._verify_task is None:
            self.w.integrity_label.setText(NOT_CHECKED)
            self.w.audit.result.setText("Not checked since the last change.")

    def clear(self) -> None:
        if self.hub.store is None:  # locked: a verify in progress stops at its next check
            self.cancel_verify()
            self._verify_task = None
            self.w.audit.verifying(False)
            self.w.integrity_label.setText("")  # there is no store to speak of
        elif not self.w.integrity_label.text():
            self._integrity_unknown()
        self.w.verify_action.setEnabled(self.hub.store is not None)
        self.w.audit.clear()

    def refresh(self) -> None:
        session = self.hub.session
        if session is None:
            return

        def done(rows: list[dict[str, Any]]) -> None:
            self.w.audit.show_log(rows)
            self.audit_shown.emit()

        self.hub.run(lambda _: forensics.audit_log(session, limit=AUDIT_ROWS), done)

    def verify(self) -> None:
        """Check every chain and signature, with progress and Cancel."""
        store = self.hub.store
        if store is None or self._verify_task is not None:
            return
        self.w.tabs.setCurrentWidget(self.w.audit)
        self.w.audit.verifying(True)

        def work(ctx: TaskContext) -> Any:
            return forensics.verify_store(store, ctx.progress, ctx.cancelled)

        def done(report: Any) -> None:
            self._verify_task = None
            self.w.audit.verifying(False)
            if report.cancelled:
                text, badge = "Verify was cancelled.", NOT_CHECKED
            elif report.ok:
                entries = counted(report.entries, "entry", "entries")
                text = f"Intact: {counted(report.chains, 'chain')}, {entries} checked."
                badge = "integrity: ✔ verified"
            else:
                text = "Problems found:\n" + "\n".join(report.problems)
                badge = "integrity: ✘ PROBLEMS"
            if report.warnings:
                text += "\n" + "\n".join(f"Note: {w}" for w in report.warnings)
            self.w.audit.result.setText(text)
            self.w.integrity_label.setText(badge)
            self.verified.emit(bool(report.ok) and not report.cancelled)

        def failed(message: str) -> None:
            self._verify_task = None
            self.w.audit.verifying(False)
            self.hub.fail(message)

        def cancelled() -> None:  # from the jobs strip or the tab's own Cancel
            self._verify_task = None
            self.w.audit.verifying(False)
            self.w.audit.result.setText("Verify was cancelled.")
            self.w.integrity_label.setText(NOT_CHECKED)
            self.verified.emit(False)

        self._verify_task = self.hub.run(
            work, done, failed, store_wide=True, job="Verify", on_cancel=cancelled
        )
        self._verify_task.progressed.connect(self.w.audit.show_progress)

    def cancel_verify(self) -> None:
        """Stop a running verify."""
        if self._verify_task is not None:
            self.hub.tasks.cancel(self._verify_task)
