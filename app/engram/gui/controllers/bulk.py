"""Many notes at once (issue 21 item 7): Delete and Change scope with several rows selected,
Note › Forget selected notes…, and Note › Forget everything about…. Each lists the notes
first (untick one to leave it alone) and then makes the change in one transaction, off the
UI thread; a note changed meanwhile refuses the whole change, in one sentence."""

from __future__ import annotations

from PySide6.QtCore import QObject

from engram.control import bulk_notes
from engram.control.bulk_notes import BulkAction, BulkPreview
from engram.control.session import PersonSession
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.notes import NotesController
from engram.gui.tasks import TaskContext
from engram.model.scope import Scope

NOTHING = "nothing was changed."


class BulkNotesController(QObject):
    def __init__(self, hub: Hub, notes: NotesController) -> None:
        super().__init__(hub)
        self.hub, self.notes = hub, notes
        w = hub.w
        w.forget_action.triggered.connect(lambda: self.on_selection(BulkAction.FORGET))
        w.forget_about_action.triggered.connect(self.forget_about)
        notes.many_requested.connect(lambda action: self.on_selection(BulkAction(action)))

    def on_selection(self, action: BulkAction) -> None:
        """The selected rows (every one, not only the current)."""
        session, ids = self.hub.session, self.notes.selected_ids()
        if session is None or not ids or not self.hub.writable():
            return
        scope = None
        if action is BulkAction.RESCOPE:
            scope = self.hub.ask(
                lambda p: p.choose_scope(Scope.DIRECT, f"{len(ids)} notes"), NOTHING
            )
            if scope is None:
                return
        chosen = scope

        def work(_: TaskContext) -> BulkPreview:
            return bulk_notes.preview(session, ids, action, chosen)

        self.hub.run(work, lambda shown: self._confirm(session, shown))

    def forget_about(self) -> None:
        session = self.hub.session
        if session is None or not self.hub.writable():
            return
        phrase = self.hub.ask(lambda p: p.phrase_to_forget(), NOTHING)
        if not phrase:
            return

        def work(_: TaskContext) -> BulkPreview:
            return bulk_notes.about(session, phrase)

        self.hub.run(work, lambda shown: self._confirm(session, shown))

    def _confirm(self, session: PersonSession, shown: BulkPreview) -> None:
        if self.hub.session is not session:
            return  # locked, or another person, while the notes were listed
        if not shown.notes:
            about = f" holds “{shown.about}”" if shown.about else " can be changed that way"
            self.hub.status(f"No note{about}; {NOTHING}", 8000)
            return
        answer = self.hub.ask(lambda p: p.bulk_preview(shown), NOTHING)
        if answer is None:
            return
        ticked, reason = answer
        if not ticked.notes:
            self.hub.status(f"Every note was unticked; {NOTHING}", 8000)
            return
        self.hub.act(
            lambda: bulk_notes.apply(session, ticked, reason or None),
            lambda done: done.sentence,
            job=f"Changing {len(ticked.notes)} of {session.person}'s notes",
        )
