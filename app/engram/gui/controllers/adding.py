"""Person > Add person…, Note > Add note…, and the empty state that offers them. Both go
through control/ (persons.add_person, notes.add_note) under the acting id, like every
other change, and the panels refresh from the hub's `changed`."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from engram.control import conversations as conversation_control
from engram.control import notes as memory_control
from engram.control import persons
from engram.control.persons import PersonSummary
from engram.gui.add_dialogs import NoteToAdd, SourceChoice
from engram.gui.controllers.hub import Hub
from engram.gui.widgets import offer
from engram.model.ids import ConversationId, PersonId


class AddingController(QObject):
    """Adds people and notes; shows the empty state where there is nothing yet."""

    person_added = Signal(str)
    note_added = Signal(str)

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.hub = hub
        self.w = hub.w
        self.people: list[PersonSummary] | None = None  # None until the list arrives
        w = self.w
        w.add_person_action.triggered.connect(self.add_person)
        w.add_note_action.triggered.connect(self.add_note)
        w.empty_state.add_person.clicked.connect(self.add_person)
        w.empty_state.add_note.clicked.connect(self.add_note)
        hub.session_changed.connect(self._session_changed)
        hub.past_changed.connect(lambda _past: self._update())

    def people_listed(self, people: list[PersonSummary]) -> None:
        """The people list arrived (after an unlock or a change): is anything missing?"""
        self.people = people
        self._update()

    def _session_changed(self) -> None:
        if self.hub.store is None:
            self.people = None
        self._update()

    def _update(self) -> None:
        hub, w = self.hub, self.w
        session = hub.session
        empty = w.empty_state
        offer(w.add_note_action, session is not None, hub.frozen)
        offer(w.add_person_action, hub.store is not None, hub.frozen)
        offer(empty.add_person, True, hub.frozen)
        if hub.store is None or self.people is None:
            self._show_table(True)
        elif not self.people:
            empty.show_empty_store()
            self._show_table(False)
            w.tabs.setCurrentIndex(0)  # no other tab has anything to show without a person
        elif session is not None and any(
            p.id == session.person and p.all_notes == 0 for p in self.people
        ):
            empty.show_no_notes(session.person)
            offer(empty.add_note, session is not None, hub.frozen)
            self._show_table(False)
        else:
            self._show_table(True)

    def _show_table(self, shown: bool) -> None:
        w = self.w
        if shown:
            w.empty_state.hide()
        w.table.setVisible(shown)
        w.filters.setVisible(shown)

    def add_person(self) -> None:
        """Ask for the id; create them under the acting id; open them."""
        hub = self.hub
        store = hub.store
        if store is None or not hub.writable():
            return
        person = hub.ask(lambda p: p.person_to_add(), "nobody was added.")
        if person is None:
            return
        actor = hub.actor
        if actor is None:
            first = not self.people
            actor = hub.ask(lambda p: p.actor_id(person, first))
            if actor is None:
                return
            hub.actor = actor
        acting = actor

        def work() -> PersonId:
            return persons.add_person(store, person, acting)

        hub.act(work, f"Added {person}.", lambda added: self.person_added.emit(added))

    def add_note(self) -> None:
        """Ask for the note (its source chosen by what the conversation was); add it."""
        hub = self.hub
        session = hub.session
        if session is None or not hub.writable():
            return

        def ask(choices: list[tuple[ConversationId, str]]) -> None:
            sources = [SourceChoice(c, label) for c, label in choices]
            note = hub.ask(lambda p: p.note_to_add(sources), "no note was added.")
            if note is not None:
                self._write(note)

        hub.run(lambda _: conversation_control.source_choices(session), ask)

    def _write(self, note: NoteToAdd) -> None:
        session = self.hub.session
        if session is None:
            return
        conversation = ConversationId(note.conversation) if note.conversation else None

        def work() -> str:
            return memory_control.add_note(
                session, note.text, note.kind, note.scope, conversation=conversation
            )

        self.hub.act(work, "Added a note.", lambda added: self.note_added.emit(added))
