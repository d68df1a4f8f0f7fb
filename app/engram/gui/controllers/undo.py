"""Edit > Undo (Ctrl+Z): the actor's own last edit, change of scope, deletion, or decision on
a candidate (an approval, with or without an edit, or a rejection: issue 21 item 8).

"Last" is as control.undo defines it: the newest change this actor made to the person on
screen since the inspector opened them. The action names what it will undo ("Undo edit
of “…”"), is off while there is nothing to undo or while time travel shows the past, and
after undoing shows the note that holds now — or, for a decision, the candidate back in
the queue. Undo is itself a change: the journal and the
audit log keep both steps. In a text field, Ctrl+Z still undoes typing (the field takes
the key first).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from engram.control import undo
from engram.control.undo import UndoableChange, Undone
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.notes import NotesController
from engram.gui.widgets import offer

PLAIN_TEXT = "&Undo"


class UndoController(QObject):
    """Keeps the Undo action naming the change it would undo, and undoes it."""

    ready = Signal()  # the action is up to date with the store
    undone = Signal(str)  # the note that holds now
    candidate_undone = Signal(str)  # the candidate back in the queue

    def __init__(self, hub: Hub, notes: NotesController) -> None:
        super().__init__(hub)
        self.hub = hub
        self.notes = notes
        self.w = hub.w
        self.since: int | None = None  # the journal head when this person was opened
        self.change: UndoableChange | None = None
        self.w.undo_action.triggered.connect(self.undo_last)
        hub.session_changed.connect(self._session_changed)
        hub.changed.connect(lambda _what: self._look())
        hub.past_changed.connect(lambda _past: self._update_action())
        self._update_action()

    def _session_changed(self) -> None:
        self.since = None
        self.change = None
        self._update_action()
        session = self.hub.session
        if session is None:
            return

        def started(head: int) -> None:
            self.since = head
            self.ready.emit()

        self.hub.run(lambda _: undo.session_start(session), started)

    def _look(self) -> None:
        session, since = self.hub.session, self.since
        if session is None or since is None:
            return

        def found(change: UndoableChange | None) -> None:
            self.change = change
            self._update_action()
            self.ready.emit()

        self.hub.run(lambda _: undo.last_change(session, since), found)

    def _update_action(self) -> None:
        action = self.w.undo_action
        change = self.change
        label = change.label if change is not None else None
        action.setText(label.replace("&", "&&") if label else PLAIN_TEXT)
        offer(
            action,
            change is not None and self.hub.session is not None,
            self.hub.frozen,  # the past is not edited, nor a read-only store
            f"{label}: a new step in the journal puts back what was there; both steps stay "
            "in the audit log."
            if label
            else "Nothing of yours to undo in this session.",
        )

    def undo_last(self) -> None:
        """Undo the change the action names (control.undo refuses, in one sentence, if the
        note changed since)."""
        session, change, since = self.hub.session, self.change, self.since
        if session is None or change is None or since is None or not self.hub.writable():
            return
        label = change.label.removeprefix("Undo ")

        def done(result: Undone) -> None:
            if result.candidate is not None:  # the candidate, pending again, in the queue
                self.candidate_undone.emit(result.candidate)
                return
            assert result.note is not None
            self.w.tabs.setCurrentIndex(0)  # show the note that holds now
            self.notes.select_note(result.note)
            self.undone.emit(result.note)

        def failed(message: str) -> None:
            self.hub.fail(message)
            self._look()  # what can be undone may have changed meanwhile

        self.change = None
        self._update_action()  # no second undo of the same change while this one runs
        self.hub.act(
            lambda: undo.undo(session, change.seq, since),
            f"Undid the {label}; the audit log keeps both steps.",
            done,
            failed,
        )
