"""The audit tab: the person's journal as a log, and the store's integrity check — and, for a
copy brought here without its checkpoint, "Re-anchor this copy…" (issue 17 item 12)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal

from engram.control import reanchor
from engram.control.verify_process import verify_in_child
from engram.control.verify_report import VerifyReport, VerifyVerdict
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.panel import PanelController
from engram.gui.tasks import Task, TaskContext
from engram.store.verify import no_checkpoint_sentence

NOT_CHECKED = "integrity: not checked"
# The badge of each verdict the engine gives (the badge says it; it decides nothing).
BADGES = {
    VerifyVerdict.INTACT: "integrity: ✔ verified",
    VerifyVerdict.INTACT_WITHOUT_CHECKPOINT: "integrity: ✔ chains intact — no checkpoint here",
    VerifyVerdict.NOT_INTACT: "integrity: ✘ PROBLEMS",
    VerifyVerdict.CANCELLED: NOT_CHECKED,
}
TRUSTED = (VerifyVerdict.INTACT, VerifyVerdict.INTACT_WITHOUT_CHECKPOINT)
WINDOW_REANCHOR = "choose Re-anchor this copy… below"
REANCHOR_TITLE = "Re-anchor this copy"
# What re-anchoring does, in plain words: the confirmation says it before anything is done.
REANCHOR_TEXT = (
    "Engram keeps a signed checkpoint beside each store, so that an older copy put in its "
    "place is noticed. This copy came here without one, so that cannot be checked yet.\n\n"
    "Re-anchoring checks every chain and signature once more, then writes a new checkpoint "
    "beside this copy that vouches for it exactly as it is now, and records in the store's "
    "signed record that you did so and when. From then on, an older copy put in its place "
    "is caught. Nothing in the notes or conversations changes.\n\n"
    "Re-anchor only a copy you chose to bring here."
)


def _window_warnings(report: VerifyReport, read_only: bool) -> list[str]:
    """Verify's warnings, the copy's remedy named as the window offers it (not the CLI's)."""
    said = no_checkpoint_sentence(report.ok, read_only)
    shown = no_checkpoint_sentence(report.ok, read_only, WINDOW_REANCHOR)
    return [shown if warning == said else warning for warning in report.warnings]


class AuditController(PanelController):
    """Verify runs with progress and Cancel (the log itself: controllers.audit_log)."""

    verified = Signal(bool)

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.tab = self.w.audit
        self._verify_task: Task | None = None
        self.verify_pid: int | None = None  # the process verifying now, or last
        self.w.verify_action.triggered.connect(self.verify)
        self.w.audit.verify_requested.connect(self.verify)
        self.w.audit.cancel_requested.connect(self.cancel_verify)
        self.w.reanchor_action.triggered.connect(self.reanchor)
        self.w.audit.reanchor_button.clicked.connect(self.reanchor)
        hub.changed.connect(self._integrity_unknown)
        hub.recorded.connect(self._integrity_unknown)  # a record is a change to the store
        self._offer_reanchor(False)

    def _offer_reanchor(self, offered: bool) -> None:
        """Show "Re-anchor this copy…" only after verify found a copy without its
        checkpoint, and never on a store opened read-only (it writes the checkpoint)."""
        offered = offered and self.hub.store is not None and not self.hub.read_only
        self.w.audit.reanchor_button.setVisible(offered)
        self.w.reanchor_action.setVisible(offered)
        self.w.reanchor_action.setEnabled(offered)

    def _integrity_unknown(self, _what: str = "") -> None:
        """The store changed since any verify: its verdict no longer speaks for it."""
        if self._verify_task is None:
            self.w.integrity_label.setText(NOT_CHECKED)
            self.w.audit.result.setText("Not checked since the last change.")
            self.w.audit.progress.reset()  # a full bar would say a check stands

    def clear(self) -> None:
        if self.hub.store is None:  # locked: a verify in progress stops at its next check
            self.cancel_verify()
            self._verify_task = None
            self.w.audit.verifying(False)
            self.w.integrity_label.setText("")  # there is no store to speak of
            self._offer_reanchor(False)
        elif not self.w.integrity_label.text():
            self._integrity_unknown()
        self.w.verify_action.setEnabled(self.hub.store is not None)
        self.w.audit.clear()

    def verify(self) -> None:
        """Check every chain and signature in a child process, with progress and Cancel."""
        store = self.hub.store
        if store is None or self._verify_task is not None:
            return
        self.w.tabs.setCurrentWidget(self.w.audit)
        self.w.audit.verifying(True)

        def started(pid: int) -> None:  # on the worker: a plain assignment
            self.verify_pid = pid

        def work(ctx: TaskContext) -> Any:
            # In a child process (control/verify_process.py): the walk's allocations and
            # their collections never hold this process's interpreter (issue 17 item 8).
            return verify_in_child(store, ctx.progress, ctx.cancelled, started)

        def done(report: VerifyReport) -> None:
            self._verify_task = None
            self.w.audit.verifying(False)
            lines = [report.sentence()]
            if report.problems:
                lines += ["Problems found:", *report.problems]
            lines += [f"Note: {w}" for w in _window_warnings(report, store.read_only)]
            if report.advice:
                lines.append(report.advice)
            self.w.audit.result.setText("\n".join(lines))
            self.w.integrity_label.setText(BADGES[report.verdict])
            self._offer_reanchor(report.no_checkpoint_here and not report.cancelled)
            self.verified.emit(report.verdict in TRUSTED)

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

    def reanchor(self) -> None:
        """Ask, in plain words, then do what `engram checkpoint reanchor` does; verify again."""
        store = self.hub.store
        if store is None or self._verify_task is not None or not self.hub.writable():
            return
        yes = self.hub.ask(
            lambda prompts: prompts.question(REANCHOR_TITLE, REANCHOR_TEXT, "&Re-anchor") or None,
            "the copy was not re-anchored",
        )
        if not yes or self.hub.store is not store:
            return
        actor = self.hub.actor or "operator"

        def done(_result: dict[str, Any]) -> None:
            self._offer_reanchor(False)
            self.verify()  # the new checkpoint, checked at once

        self.hub.act(
            lambda: reanchor.reanchor(store, actor),
            "Re-anchored: this copy has its own checkpoint now.",
            done,
        )

    def cancel_verify(self) -> None:
        """Stop a running verify."""
        if self._verify_task is not None:
            self.hub.tasks.cancel(self._verify_task)
