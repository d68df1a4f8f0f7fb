"""File › Export review copy… and File › Import review… (issue 21 items 2 and 4): one call
into control each (review_copy, review_import), run off the UI thread."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from engram.control.export_record import EXPORT_READ_ONLY
from engram.control.review_copy import ReviewCopyWritten, export_review_copy
from engram.control.review_import import (
    APPLIED,
    APPLIES,
    CONFLICT,
    IMPORTED,
    ReviewResult,
    import_review,
    preview_review,
)
from engram.control.wording import counted
from engram.gui.controllers.hub import Hub
from engram.gui.widgets import offer

# What each outcome reads as, in the preview and after the import.
_OUTCOME = {
    APPLIES: "will be applied",
    APPLIED: "applied",
    CONFLICT: "not applied",
    IMPORTED: "already imported",
}


class ReviewController(QObject):
    """A review copy of the person on screen, and a reviewed copy brought back."""

    exported = Signal(str)  # the review copy's path
    imported = Signal(object)  # the ReviewResult of an import

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.hub = hub
        self.w = hub.w
        self.w.export_review_action.triggered.connect(self.export_copy)
        self.w.import_review_action.triggered.connect(self.import_copy)
        hub.session_changed.connect(self._update_actions)
        hub.past_changed.connect(lambda _past: self._update_actions())

    def _update_actions(self) -> None:
        """A copy is of the person on screen, and recorded in their audit log (not where
        nothing can be written); an import changes the store (not in the past either)."""
        offer(
            self.w.export_review_action,
            self.hub.session is not None,
            EXPORT_READ_ONLY if self.hub.read_only else False,
        )
        offer(self.w.import_review_action, self.hub.store is not None, self.hub.frozen)

    def export_copy(self) -> None:
        """Ask where and under which passphrase, then write the copy in the jobs lane."""
        session = self.hub.session
        if session is None:
            return
        person = session.person
        path = self.hub.ask(
            lambda p: p.save_path(f"{person}-review.engram", f"Export a review copy of {person}"),
            "no review copy was written.",
        )
        if not path:
            return
        passphrase = self.hub.ask(
            lambda p: p.review_passphrase(path, True), "no review copy was written."
        )
        if not passphrase:
            return

        def done(written: ReviewCopyWritten) -> None:
            left = (
                f" {counted(written.turns_left_out, 'turn')} of other participants in shared "
                "conversations are left out of it, marked as removed."
                if written.turns_left_out
                else ""
            )
            message = f"Wrote a review copy of {person} to {written.path}."
            self.hub.status(message, 10_000)
            self.hub.recorded.emit(message)  # the audit log holds the copy now
            self.exported.emit(str(written.path))
            self.hub.prompts.inform(
                "Review copy saved",
                f"A review copy of {person}'s memory was written to {written.path}, sealed "
                f"under the passphrase you chose.{left} The copy is recorded in {person}'s "
                "audit log; when the reviewer is done, bring it back with File › Import "
                "review….",
            )

        self.hub.run(
            lambda ctx: export_review_copy(session, path, passphrase, progress=ctx.progress),
            done,
            job=f"Writing a review copy of {person}",
            changes=True,
        )

    def import_copy(self) -> None:
        """Ask for the reviewed copy and its passphrase, preview what comes back, and apply
        what still applies once the person agrees."""
        store = self.hub.store
        if store is None or not self.hub.writable():
            return
        path = self.hub.ask(lambda p: p.open_path(""), "no review was imported.")
        if not path:
            return
        passphrase = self.hub.ask(
            lambda p: p.review_passphrase(path, False), "no review was imported."
        )
        if not passphrase:
            return
        actor = self.hub.actor

        def previewed(result: ReviewResult) -> None:
            applies = result.count(APPLIES)
            text = f"{result.copy.sentence()}\n\n{_listing(result)}"
            if not applies:
                self.hub.prompts.inform("Nothing to import", f"{text}\n\nNothing was changed.")
                return
            if self.hub.ask(
                lambda p: p.question("Import review", text, f"Apply {counted(applies, 'decision')}")
            ):
                self.hub.act(
                    lambda: import_review(store, path, passphrase, actor),
                    lambda r: (
                        f"Imported the review: {counted(r.count(APPLIED), 'decision')} applied, "
                        f"{r.count(CONFLICT)} not applied."
                    ),
                    imported,
                )

        def imported(result: ReviewResult) -> None:
            self.imported.emit(result)
            self.hub.prompts.inform("Review imported", _listing(result))

        self.hub.run(
            lambda _: preview_review(store, path, passphrase, actor),
            previewed,
            store_wide=True,
        )


def _listing(result: ReviewResult) -> str:
    """Each decision in words, with what became of it (and why not, where it did not)."""
    lines = []
    for outcome in result.outcomes:
        d = outcome.decision
        said = f"{d.decided_at[:10]}, {d.reviewer}: {d.decision} {d.words} — "
        said += _OUTCOME.get(outcome.outcome, outcome.outcome)
        if outcome.why:
            said += f": {outcome.why}"
        lines.append(said)
    if result.not_carried:
        lines.append(
            f"{counted(result.not_carried, 'other change')} of the reviewer's stay in the copy "
            "(only approvals, rejections, corrections, changes of scope and deletions come back)."
        )
    return "\n".join(lines) or "The reviewer made no decisions."
