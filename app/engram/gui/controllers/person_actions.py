"""What acts on the whole person on screen: learn from new turns, export, erase."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from engram.control import access_report_file, erase, forensics
from engram.control.erasure_report import ErasureReport
from engram.control.export_record import EXPORT_READ_ONLY
from engram.control.private_file import NOT_ENCRYPTED
from engram.control.wording import counted
from engram.engine.rule_extractor import RuleExtractor
from engram.gui.controllers.hub import Hub
from engram.gui.summaries import erasure_summary
from engram.gui.tasks import Task
from engram.gui.widgets import offer
from engram.runtime import extraction


class PersonActionsController(QObject):
    """The Person and File menu actions about one person."""

    exported = Signal(str)  # the path written
    report_saved = Signal(str)  # the access report's path

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.hub = hub
        self.w = hub.w
        self.w.learn_action.triggered.connect(self.learn_now)
        self.w.export_action.triggered.connect(self.export_person)
        self.w.report_action.triggered.connect(self.save_access_report)
        self._report_task: Task | None = None
        self._export_task: Task | None = None
        hub.session_changed.connect(self._stop_report)
        hub.session_changed.connect(self._stop_export)
        self.w.erase_action.triggered.connect(self.erase_person)
        hub.session_changed.connect(self._update_actions)
        hub.past_changed.connect(lambda _past: self._update_actions())

    def _update_actions(self) -> None:
        """Learn, export and erase act on the person on screen; with nobody, they are off.
        Learn and erase change the store, so they are off in the past too."""
        shown = self.hub.session is not None
        # An export is recorded in the audit log first: not where nothing can be written.
        unrecordable = EXPORT_READ_ONLY if self.hub.read_only else False
        for action in (self.w.export_action, self.w.report_action):
            offer(action, shown, unrecordable)
        for action in (self.w.learn_action, self.w.erase_action):
            offer(action, shown, self.hub.frozen)

    def learn_now(self) -> None:
        """Run the offline rule extractor over the person's turns not analysed yet; what it
        finds lands as notes or candidates exactly as the runtime's learning would."""
        session = self.hub.session
        if session is None or not self.hub.writable():
            return
        self.hub.act(
            lambda: extraction.learn_now(session.store, session.person, RuleExtractor()),
            _learned,
            job=f"Learning from {session.person}'s turns",
        )

    def export_person(self) -> None:
        """Write everything kept about the person to a JSON file, owner-only, where the
        person chooses (the save dialog opens in their documents folder); the export is
        recorded in their audit log. A lock or another person meanwhile stops it, and
        nothing is written."""
        session = self.hub.session
        if session is None or self._export_task is not None:
            return
        person = session.person
        path = self.hub.ask(
            lambda p: p.save_path(
                f"{person}-export.json", f"Export {person}'s data (not encrypted)"
            ),
            "nothing was exported.",
        )
        if not path:
            return

        def done(written: Path | None) -> None:
            self._export_task = None
            if written is None:
                return  # stopped by a lock or a change of person: nothing was written
            message = f"Exported {person}'s data to {written} (not encrypted)."
            self.hub.status(message, 10_000)
            self.hub.recorded.emit(message)  # the audit log holds the export now
            self.exported.emit(str(written))
            self.hub.prompts.inform(
                "Export saved",
                f"Everything kept about {person} was written to {written}.\n\n{NOT_ENCRYPTED}",
            )

        def failed(message: str) -> None:
            self._export_task = None
            self.hub.fail(message)

        self.hub.status(f"Exporting {person}'s data…", 60_000)

        def cancelled() -> None:
            self._export_task = None
            self.hub.status(f"Export of {person}'s data cancelled; nothing was written.")

        task = self.hub.run(
            lambda ctx: forensics.write_export(session, path, ctx.progress, ctx.cancelled),
            done,
            failed,
            job=f"Exporting {person}'s data",
            on_cancel=cancelled,
        )
        task.progressed.connect(
            lambda done_, total: self.hub.status(
                f"Exporting {person}'s data: conversation {done_} of {total}…", 60_000
            )
        )
        self._export_task = task

    def save_access_report(self) -> None:
        """Write the signed PDF of everything kept about the person (the document support
        staff hand over), owner-only, where the person chooses (documents folder first).
        It is built and printed in the background with progress; a lock or another
        person stops it and nothing is written."""
        session = self.hub.session
        if session is None or self._report_task is not None:
            return
        person = session.person
        path = self.hub.ask(
            lambda p: p.save_path(
                f"{person}-access-report.pdf", f"Save {person}'s access report (not encrypted)"
            ),
            "no access report was written.",
        )
        if not path:
            return

        def done(written: Path | None) -> None:
            self._report_task = None
            if written is None:
                return  # stopped by a lock or a change of person: nothing was written
            message = f"Saved {person}'s access report to {written}."
            self.hub.status(message, 10_000)
            self.hub.recorded.emit(message)  # the audit log holds the report's record now
            self.report_saved.emit(str(written))
            self.hub.prompts.inform(
                "Access report saved",
                f"Everything kept about {person} is in {written}: a summary, how to ask for "
                "a correction or an erasure, every note with whom it was disclosed to and "
                "its history, every conversation as kept, and the audit log.\n\n"
                "It is signed by this store, so whoever keeps the store can check that a copy "
                "came from here unaltered; its second page says how.\n\n"
                "The file is not encrypted: anyone who can read it sees all of it. Only your "
                "user account can open it; hand it over privately and delete your copy when "
                "it is no longer needed.",
            )

        def failed(message: str) -> None:
            self._report_task = None
            self.hub.fail(message)

        self.hub.status(f"Writing {person}'s access report…", 60_000)
        # The report runs in the jobs lane: the window stays usable, the strip shows it.
        task = self.hub.run(
            lambda ctx: access_report_file.save_access_report(
                session, path, ctx.progress, ctx.cancelled
            ),
            done,
            failed,
            job=f"Writing {person}'s access report",
            on_cancel=self._report_cancelled,
        )
        task.progressed.connect(
            lambda done_, total: self.hub.status(
                f"Writing {person}'s access report: {100 * done_ // max(total, 1)}%…", 60_000
            )
        )
        self._report_task = task

    def _stop_export(self) -> None:
        """A lock or another person: an export being written stops and writes nothing."""
        if self._export_task is not None:
            self.hub.tasks.cancel(self._export_task)
            self._export_task = None

    def _report_cancelled(self) -> None:
        self._report_task = None
        self.hub.status("The access report was cancelled; nothing was written.")

    def _stop_report(self) -> None:
        """A lock or another person: a report being written stops and writes nothing."""
        if self._report_task is not None:
            self.hub.tasks.cancel(self._report_task)
            self._report_task = None

    def erase_person(self) -> None:
        """Erase everything kept about the person, on typed confirmation of their id."""
        session = self.hub.session
        if session is None or not self.hub.writable():
            return
        person = session.person
        typed = self.hub.ask(
            lambda p: p.typed_confirm(
                "Erase person", _erase_explanation(person), person, "Erase everything"
            ),
            f"nothing about {person} was erased.",
        )
        if typed is None:
            return

        def done(report: ErasureReport) -> None:
            self.hub.status(f"{person} was erased." if report.held else report.sentence(), 10_000)
            self.hub.changed.emit(f"{person} erased")
            self.hub.prompts.show_report(f"{person} was erased", erasure_summary(report))

        def failed(message: str) -> None:
            self.hub.fail(message)
            if typed == person:  # it may have committed and then not finished: look again
                self.hub.changed.emit(f"{person}: erasure not finished")

        # Finishing (rewriting the file's pages, the scan for erased bytes) is long on a big
        # store, so it is a job; it is a change, so it cannot be cancelled part-way. Once it
        # will go ahead (control refuses a wrong id, and says so), nobody is on screen while
        # it runs: nothing of theirs is read as their keys go.
        if typed == person:
            self.hub.set_session(None)
            self.hub.status(f"Erasing {person}…", 60_000)
        self.hub.run(
            lambda ctx: erase.erase_person(session, typed, ctx.progress),
            done,
            failed,
            store_wide=True,
            job=f"Erasing {person}",
            changes=True,
        )


def _learned(reports: list[extraction.PassReport]) -> str:
    if not reports:
        return "Nothing to learn: no new turns where learning is on for its agent."
    applied = sum(len(r.applied) for r in reports)
    suggested = sum(len(r.suggested) for r in reports)
    message = (
        f"Learned from {counted(sum(len(r.turns) for r in reports), 'turn')}: "
        f"{counted(applied, 'note')} written, {counted(suggested, 'candidate')} to review."
    )
    failed = [r.error for r in reports if r.error]
    if failed:
        message += (
            f" {counted(len(failed), 'learning pass', 'learning passes')} failed: {failed[0]}"
        )
    return message


def _erase_explanation(person: str) -> str:
    return (
        f"<p>This erases <b>everything kept about {html.escape(person)}</b>: every note "
        "and version, the journal and its audit trail, digest lines, usage records, "
        "their keys, the conversations only they could read, and their own words in "
        "shared conversations.</p><p>It cannot be undone. Only a record without any "
        "content stays, saying that an erasure happened.</p>"
    )
