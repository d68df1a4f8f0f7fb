"""The people list: who is in the store (with counts kept current) and whose memory is open.

The last person chosen is the one shown, always (issue 17 item 1). Choosing someone else
first clears what is on screen, so nothing of the previous person can be acted on while the
next one loads; every request to open a person gets a number, and only the newest one's
session is shown when it arrives: arrow keys held down or type-to-find start many opens,
and they may finish in any order.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QListWidgetItem

from engram.control.persons import PersonSummary, list_persons
from engram.control.session import PersonSession
from engram.control.wording import counted
from engram.gui.controllers.hub import Hub
from engram.gui.main_window import APP_NAME
from engram.gui.tasks import TaskContext
from engram.store.store import Store

PERSON_ROLE = Qt.ItemDataRole.UserRole + 3


class PeopleController(QObject):
    """Lists people after an unlock and after every change; opens the one chosen."""

    person_opened = Signal(str)
    listed = Signal(list)  # the people, with counts, as now shown

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.hub = hub
        self.w = hub.w
        self.people: list[PersonSummary] = []
        self.first_person: str | None = None  # `engram desk --person`
        self._store: Store | None = None
        self._request = 0  # the newest request to open a person; older ones are dropped
        hub.session_changed.connect(self._session_changed)
        hub.changed.connect(lambda _what: self.refresh())
        hub.reload_requested.connect(self.refresh)
        self.w.people.currentItemChanged.connect(self._person_changed)

    def _session_changed(self) -> None:
        session = self.hub.session
        # The title and status bar name the person and who is acting only while they show.
        self.w.setWindowTitle(f"{session.person} — {APP_NAME}" if session else APP_NAME)
        self.w.actor_label.setText(f"acting as {session.actor}" if session else "")
        store = self.hub.store
        if store is self._store:
            return  # only another person: the list stays
        self._store = store
        self._show([])
        if store is not None:
            self.refresh(choose_first=True)

    def refresh(self, choose_first: bool = False) -> None:
        """List the people again (their counts move with every change)."""
        store = self.hub.store
        if store is None:
            return

        def done(people: list[PersonSummary]) -> None:
            self._show(people)
            if choose_first:
                # The first useful widget takes the keyboard, never the hidden passphrase.
                (self.w.people if len(people) > 1 else self.w.table).setFocus()
            if choose_first and people:
                if len(people) == 1 and self.hub.actor is None:
                    self.hub.actor = people[0].id  # an individual's own store opens to theirs
                ids: list[str] = [p.id for p in people]
                first = ids.index(self.first_person) if self.first_person in ids else 0
                self.w.people.setCurrentRow(first)

        self.hub.run(lambda _: list_persons(store), done, store_wide=True)

    def _show(self, people: list[PersonSummary]) -> None:
        self.people = people
        current = self.hub.session.person if self.hub.session else None
        listing = self.w.people
        listing.blockSignals(True)
        listing.clear()
        for person in people:
            # One line each: a narrow list wraps between them, never inside "7 chats".
            chats = counted(person.conversations, "chat")
            item = QListWidgetItem(
                f"{person.id}\n{person.active_notes} active of {person.all_notes}\n{chats}"
            )
            item.setToolTip(
                f"{counted(person.active_notes, 'active note')}, {person.all_notes} in all, "
                f"{counted(person.conversations, 'conversation')}"
            )
            item.setData(PERSON_ROLE, person.id)
            listing.addItem(item)
            if person.id == current:
                listing.setCurrentItem(item)
        listing.blockSignals(False)
        if self.hub.store is not None:
            self.listed.emit(people)

    def _person_changed(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is not None:
            self.open_person(str(current.data(PERSON_ROLE)))

    def _show_chosen(self) -> None:
        """Highlight the person on screen again (a choice that was not carried out)."""
        session = self.hub.session
        listing = self.w.people
        listing.blockSignals(True)
        for row in range(listing.count()):
            item = listing.item(row)
            if session is not None and item.data(PERSON_ROLE) == session.person:
                listing.setCurrentItem(item)
                break
        else:
            listing.setCurrentRow(-1)
        listing.blockSignals(False)

    def open_person(self, person: str) -> None:
        """Show one person's memory, under the acting person's id. A later call supersedes
        this one, whichever finishes first."""
        hub = self.hub
        store = hub.store
        if store is None:
            return
        self._request += 1
        request = self._request
        if hub.actor is None:
            one_person_store = len(self.people) == 1
            hub.actor = hub.ask(lambda p: p.actor_id(person, one_person_store))
            if hub.actor is None:
                if hub.store is store:
                    hub.status(f"Say who is acting to open {person}'s notes.", 8000)
                    self._show_chosen()
                return
        if request != self._request:
            return  # another person was chosen while the question was open
        actor = hub.actor
        if hub.session is not None and hub.session.person != person:
            # Nothing of the person before stays on screen to be acted on meanwhile.
            hub.set_session(None)
        hub.status(f"Opening {person}…", 0)

        def work(_: TaskContext) -> PersonSession:
            return PersonSession.open(store, person, actor)

        def done(session: PersonSession) -> None:
            if request != self._request:
                return  # someone chosen later is (or will be) shown instead
            hub.w.statusBar().clearMessage()
            hub.set_session(session)
            self.person_opened.emit(session.person)

        def failed(message: str) -> None:
            if request == self._request:
                hub.fail(message)

        # Store-wide: clearing the screen above must not drop the answer to this request.
        hub.run(work, done, failed, store_wide=True)
