"""The inspector's behaviour: every action is one call into control/ or runtime/, run off
the UI thread through TaskRunner; the views refresh from what comes back."""

from __future__ import annotations

import gc
import html
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import QApplication, QListWidgetItem

from engram.control import candidates as candidate_control
from engram.control import conversations as conversation_control
from engram.control import erase, forensics
from engram.control import notes as memory_control
from engram.control.persons import PersonSummary, list_persons
from engram.control.session import PersonSession
from engram.engine.history_search import NO_MATCH_HINT
from engram.engine.rule_extractor import RuleExtractor
from engram.gui.dialogs import Prompts
from engram.gui.idle_lock import DEFAULT_MINUTES, IdleLock
from engram.gui.main_window import MainWindow
from engram.gui.notes_model import SORT_KEYS, ListSource, LiveSource, NotesSource
from engram.gui.tasks import Task, TaskContext, TaskRunner
from engram.gui.timeline_view import TimelineRow
from engram.model.errors import EngramError
from engram.model.ids import ConversationId
from engram.model.notes import Note, NoteFilter, NoteStatus
from engram.model.scope import Audience, AudienceKind, Kind, Scope
from engram.runtime import context as turn_context
from engram.runtime import conversations as runtime_conversations
from engram.runtime import extraction, history
from engram.runtime.person_search import PersonIndex
from engram.store.store import Store

PERSON_ROLE = Qt.ItemDataRole.UserRole + 3
TIMELINE_ROWS = 300
AUDIT_ROWS = 1000  # the newest; `engram audit` and export give the whole journal


class InspectorController(QObject):
    """Wires the window to the engine. Signals say when a view has caught up (tests wait)."""

    unlocked = Signal()
    locked = Signal()
    person_opened = Signal(str)
    notes_shown = Signal()
    detail_shown = Signal(str)
    changed = Signal(str)
    preview_shown = Signal()
    audit_shown = Signal()
    candidates_shown = Signal()
    transcript_shown = Signal(str)
    verified = Signal(bool)
    searched = Signal(str)
    failed = Signal(str)

    def __init__(
        self,
        window: MainWindow,
        *,
        prompts: Any = None,
        settings: QSettings | None = None,
        idle: IdleLock | None = None,
        actor: str | None = None,
    ) -> None:
        super().__init__(window)
        self.w = window
        self.prompts = prompts or Prompts(window)
        self.settings = settings or QSettings()
        minutes = float(str(self.settings.value("lock_minutes", DEFAULT_MINUTES)))
        self.idle = idle or IdleLock(minutes=minutes, parent=self)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self.idle)
        self.tasks = TaskRunner(self)
        window.notes_model.loader = lambda load, done: self._load_page(load, done)
        self.store: Store | None = None
        self.session: PersonSession | None = None
        self.preset_actor = actor
        self.actor: str | None = actor
        self.people: list[PersonSummary] = []
        self._stale: set[str] = set()
        self._pending_turn: tuple[str, str] | None = None
        self.first_person: str | None = None
        self.selected: str | None = None
        self.detail: dict[str, Any] | None = None
        self._verify_task: Task | None = None
        self._notes_task: Task | None = None
        self._generation = 0
        self._person_index: PersonIndex | None = None
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(250)
        self._search_timer.timeout.connect(self.refresh_notes)
        self._sort: tuple[str, bool] = ("rank", False)
        self._wire()
        self.w.unlock_page.set_recent(self._recent(), None)
        self.w.show_inspector(False)

    # ---- wiring -------------------------------------------------------------------------

    def _wire(self) -> None:
        w = self.w
        page = w.unlock_page
        page.unlock_requested.connect(self.unlock)
        page.create_requested.connect(self.create)
        page.browse_requested.connect(self._browse)
        w.open_action.triggered.connect(self._browse)
        w.lock_action.triggered.connect(lambda: self.lock("Locked."))
        w.quit_action.triggered.connect(w.close)
        w.export_action.triggered.connect(self.export_person)
        w.edit_action.triggered.connect(self.edit_selected)
        w.scope_action.triggered.connect(self.scope_selected)
        w.delete_action.triggered.connect(self.delete_selected)
        w.erase_action.triggered.connect(self.erase_person)
        w.verify_action.triggered.connect(self.verify)
        w.learn_action.triggered.connect(self.learn_now)
        w.refresh_action.triggered.connect(self.refresh_all)
        w.delete_conversation_action.triggered.connect(self._delete_current_conversation)
        w.find_action.triggered.connect(self._focus_search)
        w.time_travel_action.triggered.connect(w.filters.time_travel.toggle)
        w.people.currentItemChanged.connect(self._person_changed)
        w.tabs.currentChanged.connect(lambda _i: self._refresh_current_tab())
        f = w.filters
        f.search.textChanged.connect(lambda _t: self._search_timer.start())
        for combo in (f.status, f.scope, f.kind):
            combo.currentIndexChanged.connect(lambda _i: self.refresh_notes())
        f.time_travel.toggled.connect(self._time_travel_toggled)
        f.moment.dateTimeChanged.connect(lambda _m: self._search_timer.start())
        w.table.selectionModel().currentRowChanged.connect(self._row_changed)
        w.table.horizontalHeader().sortIndicatorChanged.connect(self._sort_changed)
        w.timeline.note_clicked.connect(self.select_note)
        w.detail.edit_requested.connect(self.edit_selected)
        w.detail.scope_requested.connect(self.scope_selected)
        w.detail.delete_requested.connect(self.delete_selected)
        w.detail.turn_requested.connect(self.open_turn)
        w.detail.note_requested.connect(self.select_note)
        w.conversations.conversation_selected.connect(self.show_transcript)
        w.conversations.delete_requested.connect(self.delete_conversation)
        w.conversations.search_requested.connect(self.search_conversation)
        w.conversations.excise_requested.connect(self.excise_result)
        w.conversations.person_search_requested.connect(self.search_person)
        w.conversations.turn_requested.connect(self.open_turn)
        c = w.candidates
        c.status_changed.connect(self._refresh_candidates)
        c.candidate_selected.connect(self._show_candidate)
        c.approve_requested.connect(self.approve_candidate)
        c.reject_requested.connect(self.reject_candidate)
        c.apply_requested.connect(self.apply_candidate)
        c.turn_requested.connect(self.open_turn)
        w.audience.preview_requested.connect(self.preview)
        w.audit.verify_requested.connect(self.verify)
        w.audit.cancel_requested.connect(self._cancel_verify)
        self.idle.idle.connect(
            lambda: self.lock(f"Locked after {self.idle.seconds / 60:g} minutes without activity.")
        )
        self.tasks.busy_changed.connect(
            lambda busy: w.busy_label.setText("working…" if busy else "")
        )
        self.tasks.failed.connect(self._fail)

    def _run(
        self,
        work: Callable[[TaskContext], Any],
        done: Callable[[Any], None] | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> Task:
        """Run work for the current unlock only: results arriving after a lock are dropped,
        so nothing decrypted reappears behind the unlock page."""
        generation = self._generation

        def deliver(result: Any) -> None:
            if generation == self._generation and done is not None:
                done(result)

        def fail(message: str) -> None:
            if generation == self._generation:
                (on_error or self._fail)(message)

        return self.tasks.run(work, deliver, fail)

    def _load_page(self, load: Any, done: Any) -> None:
        self._run(lambda _: load(), done)

    def _focus_search(self) -> None:
        self.w.tabs.setCurrentIndex(0)
        self.w.filters.search.setFocus()

    def _fail(self, message: str) -> None:
        self.w.statusBar().showMessage(message, 10_000)
        self.prompts.error(message)
        self.failed.emit(message)

    # ---- unlock and lock ----------------------------------------------------------------

    def _recent(self) -> list[str]:
        value = self.settings.value("recent_stores", [])
        return [str(v) for v in (value if isinstance(value, list) else [value]) if v]

    def _browse(self) -> None:
        path = self.prompts.open_path()
        if path:
            self.w.unlock_page.set_recent(self._recent(), path)
            if self.store is not None:
                self.lock("Choose how to unlock the other store.")

    def unlock(self, path: str, passphrase: str, remember: bool) -> None:
        """Open a store with its passphrase, or from the OS keyring when none is given."""
        if not path:
            self.w.unlock_page.reset("Choose a store file first.")
            return
        self.w.unlock_page.busy(True, "Unlocking…")

        def work(_: TaskContext) -> tuple[Store, list[PersonSummary]]:
            store = Store.open(path, passphrase=passphrase or None)
            try:
                if remember and passphrase:
                    store.remember_key()
                return store, list_persons(store)
            except BaseException:
                store.close()
                raise

        self.tasks.run(work, self._opened, self._unlock_failed)

    def create(self, path: str, passphrase: str, remember: bool) -> None:
        """Create a new, empty store."""
        if not path:
            self.w.unlock_page.reset("Type where the new store should go.")
            return
        self.w.unlock_page.busy(True, "Creating…")

        def work(_: TaskContext) -> tuple[Store, list[PersonSummary]]:
            store = Store.create(
                path, passphrase=passphrase or None, use_keyring=remember or not passphrase
            )
            return store, []

        self.tasks.run(work, self._opened, self._unlock_failed)

    def _unlock_failed(self, message: str) -> None:
        self.w.unlock_page.reset(message)
        self.failed.emit(message)

    def _opened(self, result: tuple[Store, list[PersonSummary]]) -> None:
        store, people = result
        self.store = store
        recent = [store.url.removeprefix("sqlite:///"), *self._recent()]
        self.settings.setValue("recent_stores", list(dict.fromkeys(recent))[:8])
        self.w.store_label.setText(store.url.removeprefix("sqlite:///"))
        self.w.show_inspector(True)
        self.w.unlock_page.reset("")
        self.idle.arm()
        self._show_people(people)
        # What is alive now lives as long as the session: keep the collector off it, so its
        # full passes stay short while the person scrolls.
        gc.collect()
        gc.freeze()
        self.unlocked.emit()
        if len(people) == 1 and self.actor is None:
            self.actor = people[0].id  # an individual's own store opens to their notes
        if people:
            ids: list[str] = [p.id for p in people]
            first = ids.index(self.first_person) if self.first_person in ids else 0
            self.w.people.setCurrentRow(first)

    def lock(self, message: str = "Locked.") -> None:
        """Drop every decrypted thing and the key; the unlock page asks again."""
        self._generation += 1  # whatever is still on its way belongs to the old session
        self._person_index = None  # decrypted text lives only while unlocked
        self.idle.disarm()
        for task in (self._verify_task, self._notes_task):
            if task is not None:
                task.context.cancel()  # long work stops at its next check, not the lock
        self._verify_task = self._notes_task = None
        self.w.audit.verifying(False)
        self.tasks.wait()
        if self.store is not None:
            self.store.close()
        self.store = None
        self.session = None
        self.selected = None
        self.detail = None
        self.actor = self.preset_actor
        w = self.w
        w.notes_model.clear_rows()
        w.detail.show_detail(None)
        w.timeline.set_rows([], w.timeline._now)
        w.audience.clear()
        w.audit.clear()
        w.conversations.clear()
        w.people.blockSignals(True)
        w.people.clear()
        w.people.blockSignals(False)
        w.actor_label.setText("")
        w.integrity_label.setText("integrity: not checked")
        w.show_inspector(False)
        w.unlock_page.set_recent(self._recent(), None)
        w.unlock_page.reset(message)
        self.locked.emit()

    # ---- people -------------------------------------------------------------------------

    def _show_people(self, people: list[PersonSummary]) -> None:
        self.people = people
        w = self.w
        w.people.blockSignals(True)
        w.people.clear()
        for person in people:
            item = QListWidgetItem(
                f"{person.id}\n{person.active_notes} active of {person.all_notes} · "
                f"{person.conversations} chats"
            )
            item.setToolTip(
                f"{person.active_notes} active notes, {person.all_notes} in all, "
                f"{person.conversations} conversations"
            )
            item.setData(PERSON_ROLE, person.id)
            w.people.addItem(item)
        w.people.blockSignals(False)

    def _person_changed(self, current: QListWidgetItem | None, _previous: object) -> None:
        if current is not None:
            self.open_person(str(current.data(PERSON_ROLE)))

    def open_person(self, person: str) -> None:
        """Show one person's memory, under the acting person's id."""
        store = self.store
        if store is None:
            return
        if self.actor is None:
            self.actor = self.prompts.actor_id()
            if self.actor is None:
                self.w.statusBar().showMessage("Say who is acting to open someone's notes.", 8000)
                return
        actor = self.actor

        def work(_: TaskContext) -> PersonSession:
            return PersonSession.open(store, person, actor)

        def done(session: PersonSession) -> None:
            self.session = session
            self.selected = None
            self.detail = None
            self.w.actor_label.setText(f"acting as {session.actor}")
            self.w.conversations.can_excise = session.actor.startswith("staff:")
            self.w.setWindowTitle(f"Engram Inspector — {session.person}")
            self.refresh_all()
            self.person_opened.emit(session.person)

        self._run(work, done)

    # ---- notes --------------------------------------------------------------------------

    def _filter(self) -> NoteFilter:
        f = self.w.filters
        statuses = f.status.currentData()
        scopes = f.scope.currentData()
        kinds = f.kind.currentData()
        order, descending = self._sort
        return NoteFilter(
            statuses=None if statuses is None else [NoteStatus(s) for s in statuses],
            scopes=None if scopes is None else [Scope(s) for s in scopes],
            kinds=None if kinds is None else [Kind(k) for k in kinds],
            order=order,
            descending=descending,
        )

    def _time_travel_toggled(self, on: bool) -> None:
        self.w.filters.moment.setEnabled(on)
        self.refresh_notes()

    def _sort_changed(self, column: int, order: Qt.SortOrder) -> None:
        key = SORT_KEYS.get(column)
        if key is None:
            self.w.table.horizontalHeader().blockSignals(True)
            self.w.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
            self.w.table.horizontalHeader().blockSignals(False)
            self._sort = ("rank", False)
        else:
            self._sort = (key, order == Qt.SortOrder.DescendingOrder)
        self.refresh_notes()

    def refresh_notes(self) -> None:
        """Rebuild the table's source from the filters (text search and time travel decrypt
        or replay, so they run in the background)."""
        session = self.session
        if session is None:
            return
        note_filter = self._filter()
        needle = self.w.filters.search.text().strip()
        moment = None
        if self.w.filters.time_travel.isChecked():
            chosen = self.w.filters.moment.dateTime().toPython()
            assert isinstance(chosen, datetime)
            moment = chosen.replace(tzinfo=UTC)

        def work(ctx: TaskContext) -> NotesSource:
            if moment is None and not needle:
                return LiveSource(session, note_filter)
            if moment is not None:
                notes = _filtered(
                    memory_control.notes_as_of(session, moment, include_closed=True), note_filter
                )
                if needle:
                    texts = memory_control.texts_of(session, notes)
                    notes = [
                        n for n in notes if needle.casefold() in (texts[n.id] or "").casefold()
                    ]
                return ListSource(notes, session)
            found = memory_control.matching_text(session, note_filter, needle, ctx.cancelled)
            return ListSource(found, session)

        def done(source: NotesSource) -> None:
            if self.session is not session or task is not self._notes_task:
                return  # a newer listing replaced this one
            self.w.notes_model.set_source(session, source)
            self.w.table.scrollToTop()  # a new list starts at its top (and its first page)
            if isinstance(source, LiveSource):
                self._run(lambda _: source.load_ids())
            total = source.total()
            when = f" as of {moment:%Y-%m-%d %H:%M} UTC" if moment else ""
            self.w.filters.count.setText(f"{total} note{'s' if total != 1 else ''}{when}")
            self._reselect()
            self.notes_shown.emit()

        if self._notes_task is not None:
            self._notes_task.context.cancel()  # a search still decrypting stops early
        task = self._run(work, done)
        self._notes_task = task

    def _reselect(self) -> None:
        if self.selected is None:
            return
        row = self.w.notes_model.row_of(self.selected)
        if row is not None:
            self.w.table.blockSignals(True)
            self.w.table.selectRow(row)
            self.w.table.blockSignals(False)

    def _row_changed(self, current: Any, _previous: Any) -> None:
        note = self.w.notes_model.note_at(current.row()) if current.isValid() else None
        if note is not None and note.id != self.selected:
            self.select_note(note.id)

    def select_note(self, note_id: str) -> None:
        """Show a note's detail (versions, provenance, arithmetic, usage)."""
        session = self.session
        if session is None:
            return
        self.selected = note_id
        self.w.timeline.select(note_id)

        def done(detail: dict[str, Any]) -> None:
            if self.session is not session:
                return
            self.detail = detail
            self.w.detail.show_detail(detail)
            self.detail_shown.emit(note_id)

        self._run(lambda _: memory_control.show_note(session, note_id), done)

    # ---- everything about a person ------------------------------------------------------

    def refresh_all(self) -> None:
        """Notes, detail, timeline, conversations, audit, audience preview, people counts."""
        if self.session is None:
            return
        self.refresh_notes()
        if self.selected:
            self.select_note(self.selected)
        else:
            self.w.detail.show_detail(None)
        # Tabs out of sight refresh when they are shown: less work while the person waits.
        self._stale = {"timeline", "conversations", "audit", "audience", "candidates"}
        self._refresh_current_tab()

    def _refresh_current_tab(self) -> None:
        w = self.w
        tab = {
            w.timeline_tab: "timeline",
            w.conversations: "conversations",
            w.audit: "audit",
            w.audience: "audience",
            w.candidates: "candidates",
        }.get(w.tabs.currentWidget())
        if tab is None or tab not in self._stale or self.session is None:
            return
        self._stale.discard(tab)
        if tab == "timeline":
            self._refresh_timeline()
        elif tab == "conversations":
            self._refresh_conversations()
        elif tab == "audit":
            self._refresh_audit()
        elif tab == "candidates":
            self._refresh_candidates()
        else:
            self.preview(w.audience.chosen())

    def _refresh_people(self) -> None:
        store = self.store
        if store is None:
            return

        def done(people: list[PersonSummary]) -> None:
            current = self.session.person if self.session else None
            self._show_people(people)
            for row, person in enumerate(people):
                if person.id == current:
                    self.w.people.blockSignals(True)
                    self.w.people.setCurrentRow(row)
                    self.w.people.blockSignals(False)

        self._run(lambda _: list_persons(store), done)

    def _refresh_timeline(self) -> None:
        session = self.session
        if session is None:
            return

        def work(_: TaskContext) -> list[TimelineRow]:
            recent = NoteFilter(statuses=None, order="created", descending=True)
            notes = memory_control.page(session, recent, offset=0, limit=TIMELINE_ROWS)[1]
            notes.reverse()
            texts = memory_control.texts_of(session, notes)
            return [TimelineRow(n, texts[n.id] or "[removed]") for n in notes]

        def done(rows: list[TimelineRow]) -> None:
            if self.session is session:
                self.w.timeline.set_rows(rows, session.store.now())
                self.w.timeline.select(self.selected)

        self._run(work, done)

    def _refresh_conversations(self) -> None:
        session = self.session
        if session is None:
            return

        def done(infos: Any) -> None:
            self.w.conversations.show_conversations(infos)
            pending, self._pending_turn = self._pending_turn, None
            if pending is not None:
                self._select_turn(*pending)

        self._run(
            lambda _: runtime_conversations.conversations_of(session.store, session.person), done
        )

    def _refresh_audit(self) -> None:
        session = self.session
        if session is None:
            return

        def done(rows: list[dict[str, Any]]) -> None:
            self.w.audit.show_log(rows)
            self.audit_shown.emit()

        self._run(lambda _: forensics.audit_log(session, limit=AUDIT_ROWS), done)

    # ---- candidate review ---------------------------------------------------------------

    def _refresh_candidates(self) -> None:
        session = self.session
        if session is None:
            return
        status = self.w.candidates.chosen_status()

        def work(_: TaskContext) -> tuple[list[dict[str, Any]], int]:
            rows = candidate_control.list_candidates(session, status)
            if status == "pending":
                return rows, len(rows)
            return rows, candidate_control.count_candidates(session, "pending")

        def done(result: tuple[list[dict[str, Any]], int]) -> None:
            self.w.candidates.show_candidates(*result)
            self.candidates_shown.emit()

        self._run(work, done)

    def _show_candidate(self, candidate_id: str) -> None:
        session = self.session
        if session is None:
            return

        def work(_: TaskContext) -> tuple[dict[str, Any], list[dict[str, Any]]]:
            return (
                candidate_control.get_candidate(session, candidate_id),
                candidate_control.audit(session, candidate_id),
            )

        self._run(work, lambda result: self.w.candidates.show_trail(*result))

    def _decide(self, what: str, fn: Callable[[PersonSession], Any]) -> None:
        """Run a decision; a conflict (someone decided first) is said and the list reloads."""
        session = self.session
        if session is None:
            return

        def failed(message: str) -> None:
            self._fail(message)
            self._refresh_candidates()

        def done(_result: Any) -> None:
            self.w.statusBar().showMessage(what, 6000)
            self.refresh_all()  # an applied candidate is a new note
            self._refresh_candidates()
            self.changed.emit(what)

        self._run(lambda _: fn(session), done, failed)

    def learn_now(self) -> None:
        """Run the offline rule extractor over the person's turns not analysed yet; what it
        finds lands as notes or candidates exactly as the runtime's learning would."""
        store, session = self.store, self.session
        if store is None or session is None:
            return

        def done(reports: list[extraction.PassReport]) -> None:
            applied = sum(len(r.applied) for r in reports)
            suggested = sum(len(r.suggested) for r in reports)
            failed = [r.error for r in reports if r.error]
            if not reports:
                message = "Nothing to learn: no new turns where learning is on for its agent."
            else:
                message = (
                    f"Learned from {sum(len(r.turns) for r in reports)} turn(s): "
                    f"{applied} note(s) written, {suggested} candidate(s) to review."
                )
            if failed:
                message += f" {len(failed)} pass(es) failed: {failed[0]}"
            self.w.statusBar().showMessage(message, 10_000)
            self.refresh_all()
            self.changed.emit(message)

        person = session.person
        self._run(lambda _: extraction.learn_person(store, person, RuleExtractor()), done)

    def approve_candidate(self, candidate_id: str, revision: int, apply_now: bool) -> None:
        """Approve the revision on screen (and apply it right away if asked)."""
        self._decide(
            "Candidate approved and applied." if apply_now else "Candidate approved.",
            lambda s: candidate_control.approve(s, candidate_id, revision, apply_now=apply_now),
        )

    def reject_candidate(self, candidate_id: str, revision: int) -> None:
        """Reject the revision on screen, saying why."""
        reason = self.prompts.reject_reason()
        if not reason:
            return
        self._decide(
            "Candidate rejected.",
            lambda s: candidate_control.reject(s, candidate_id, revision, reason),
        )

    def apply_candidate(self, candidate_id: str) -> None:
        """Make an approved candidate a note (a separate step, P6)."""
        self._decide("Candidate applied.", lambda s: candidate_control.apply(s, candidate_id))

    def show_transcript(self, conversation: str) -> None:
        """Load one conversation's turns."""
        store = self.store
        if store is None:
            return

        def done(entries: Any) -> None:
            self.w.conversations.show_transcript(entries)
            self.transcript_shown.emit(conversation)

        self._run(
            lambda _: runtime_conversations.transcript(store, ConversationId(conversation)), done
        )

    def search_conversation(self, conversation: str, query: str, mode: str) -> None:
        """conversation_find, as the agent would call it, shown beside the transcript."""
        store = self.store
        if store is None:
            return
        args = {"query": query, "mode": mode, "limit": 25}

        def done(answer: dict[str, Any]) -> None:
            self.w.conversations.show_results(answer)
            self.searched.emit(conversation)

        self._run(
            lambda _: history.dispatch(
                store, ConversationId(conversation), "conversation_find", args
            ),
            done,
        )

    def search_person(self, query: str, mode: str) -> None:
        """Search every conversation of the person. The index is built in memory on first
        use (off the UI thread, with progress) and dropped on lock or any change."""
        session = self.session
        if session is None:
            return

        known = self._person_index

        def work(ctx: TaskContext) -> tuple[PersonIndex, dict[str, Any]]:
            index = known
            if index is None or index.person != session.person:
                index = PersonIndex.build(
                    session.store, session.person, ctx.progress, ctx.cancelled
                )
            try:
                hits, more = index.search(query, mode)
            except EngramError as error:
                return index, {"error": str(error)}
            answer: dict[str, Any] = {
                "matches": [h.to_json() for h in hits],
                "truncated": more,
            }
            if not hits:
                answer["hint"] = NO_MATCH_HINT
            return index, answer

        def done(result: tuple[PersonIndex, dict[str, Any]]) -> None:
            # Kept only if it arrives before a lock: the generation check drops it otherwise.
            self._person_index, answer = result
            self.w.conversations.show_results(answer)
            self.searched.emit("*")

        task = self._run(work, done)
        task.progressed.connect(
            lambda d, t: self.w.statusBar().showMessage(f"Indexing conversations… {d} of {t}")
        )

    def excise_result(self, conversation: str, call: str) -> None:
        """Staff remove a tool result's content, with a reason the log keeps."""
        store, actor = self.store, self.actor
        if store is None or actor is None:
            return
        reason = self.prompts.excise_reason()
        if not reason:
            return

        def work(_: TaskContext) -> None:
            runtime_conversations.excise_tool_result(
                store, ConversationId(conversation), call, actor=actor, reason=reason
            )

        def done(_: None) -> None:
            self._person_index = None
            self.show_transcript(conversation)
            self.changed.emit(f"result of {call} removed")

        self._run(work, done)

    def open_turn(self, conversation: str, turn: str) -> None:
        """Provenance: open the conversation at the turn a note came from."""
        if "conversations" in self._stale or self.w.conversations.list.count() == 0:
            self._pending_turn = (conversation, turn)  # selected once the list has loaded
            self._stale.add("conversations")
            if self.w.tabs.currentWidget() is self.w.conversations:
                self._refresh_current_tab()
            else:
                self.w.tabs.setCurrentWidget(self.w.conversations)
            return
        self.w.tabs.setCurrentWidget(self.w.conversations)
        self._select_turn(conversation, turn)

    def _select_turn(self, conversation: str, turn: str) -> None:
        if not self.w.conversations.select(conversation, turn or None):
            self._fail(f"Conversation {conversation} is no longer in this store.")

    def preview(self, kind: str) -> None:
        """The audience simulator: the exact block and recall answer for this audience."""
        session = self.session
        if session is None:
            return
        audience = Audience(AudienceKind(kind), session.person)

        def work(_: TaskContext) -> tuple[Any, Any]:
            block = turn_context.preview_block(session.store, session.person, audience)
            answer = turn_context.preview_recall(session.store, session.person, audience)
            return block, answer

        def done(result: tuple[Any, Any]) -> None:
            self.w.audience.show_preview(*result)
            self.preview_shown.emit()

        self._run(work, done)

    # ---- actions ------------------------------------------------------------------------

    def _act(self, what: str, fn: Any, select: str | None = None) -> None:
        def done(result: Any) -> None:
            if select == "result" and isinstance(result, str):
                self.selected = result
            self.w.statusBar().showMessage(what, 6000)
            self._person_index = None  # the conversations may have changed
            self.refresh_all()
            self._refresh_people()  # counts moved
            self.changed.emit(what)

        self._run(lambda _: fn(), done)

    def _active_detail(self) -> dict[str, Any] | None:
        if self.session is None or self.detail is None:
            return None
        if self.detail["status"] != "active":
            self.w.statusBar().showMessage("Only active notes can be changed.", 6000)
            return None
        return self.detail

    def edit_selected(self) -> None:
        """Edit the selected note's text: a new version, the old one closed (C5)."""
        detail = self._active_detail()
        if detail is None or self.session is None:
            return
        text = self.prompts.edit_text(detail["text"] or "")
        if text is None or text.strip() == (detail["text"] or "").strip():
            return
        session = self.session
        self._act(
            "Note edited; the earlier version is kept, closed.",
            lambda: memory_control.edit_note(session, detail["id"], text=text),
            "result",
        )

    def scope_selected(self) -> None:
        """Change who the selected note may reach."""
        detail = self._active_detail()
        if detail is None or self.session is None:
            return
        scope = self.prompts.choose_scope(Scope(detail["scope"]))
        if scope is None or scope.value == detail["scope"]:
            return
        session = self.session
        self._act(
            f"Scope changed to {scope.value}.",
            lambda: memory_control.edit_note(session, detail["id"], scope=scope),
            "result",
        )

    def delete_selected(self) -> None:
        """Delete the selected note: its interval closes, its record stays (C2)."""
        detail = self._active_detail()
        if detail is None or self.session is None:
            return
        reason = self.prompts.delete_reason()
        if reason is None:
            return
        session = self.session
        self._act(
            "Note deleted; its record stays in the audit log.",
            lambda: memory_control.delete_note(session, detail["id"], reason or None),
        )

    def _delete_current_conversation(self) -> None:
        conversation = self.w.conversations.current()
        if conversation:
            self.delete_conversation(conversation)
        else:
            self.w.tabs.setCurrentWidget(self.w.conversations)
            self.w.statusBar().showMessage("Select a conversation to delete.", 6000)

    def delete_conversation(self, conversation: str) -> None:
        """Preview which notes close and which survive, then delete on typed confirmation."""
        session = self.session
        if session is None:
            return
        target = ConversationId(conversation)

        def confirm(preview: conversation_control.ConversationDeletion) -> None:
            typed = self.prompts.typed_confirm(
                "Delete conversation", _cascade_html(preview), "delete", "Delete conversation"
            )
            if typed is None:
                return
            if typed != "delete":
                self._fail("Nothing was deleted: the confirmation did not match.")
                return
            self._act(
                f"Conversation {conversation} deleted.",
                lambda: conversation_control.delete_conversation(session, target),
            )

        self._run(lambda _: conversation_control.preview_delete(session, target), confirm)

    def erase_person(self) -> None:
        """Erase everything kept about the person, on typed confirmation of their id."""
        session = self.session
        if session is None:
            return
        person = session.person
        explanation = (
            f"<p>This erases <b>everything kept about {html.escape(person)}</b>: every note "
            "and version, the journal and its audit trail, digest lines, usage records, "
            "their keys, the conversations only they could read, and their own words in "
            "shared conversations.</p><p>It cannot be undone. Only a record without any "
            "content stays, saying that an erasure happened.</p>"
        )
        typed = self.prompts.typed_confirm("Erase person", explanation, person, "Erase everything")
        if typed is None:
            return

        def done(report: dict[str, Any]) -> None:
            self.session = None
            self.selected = None
            self.detail = None
            self.w.notes_model.clear_rows()
            self.w.detail.show_detail(None)
            self.w.timeline.set_rows([], self.w.timeline._now)
            self.w.conversations.clear()
            self.w.audit.clear()
            self.w.audience.clear()
            self._refresh_people()
            self.prompts.show_report(f"{person} was erased", json.dumps(report, indent=2))
            self.changed.emit(f"{person} erased")

        self._run(lambda _: erase.erase_person(session, typed), done)

    def export_person(self) -> None:
        """Write everything kept about the person to a JSON file."""
        session = self.session
        if session is None:
            return
        path = self.prompts.save_path(f"{session.person}-export.json")
        if not path:
            return

        def work(_: TaskContext) -> str:
            data = forensics.export_person(session)
            Path(path).write_text(json.dumps(data, indent=2, ensure_ascii=False), "utf-8")
            return path

        def done(written: str) -> None:
            self.w.statusBar().showMessage(f"Exported to {written}.", 8000)
            self.changed.emit("exported")

        self._run(work, done)

    def verify(self) -> None:
        """Check every chain and signature, with progress and Cancel."""
        store = self.store
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
                text, badge = "Verify was cancelled.", "integrity: not checked"
            elif report.ok:
                text = f"Intact: {report.chains} chains, {report.entries} entries checked."
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
            self._fail(message)

        self._verify_task = self._run(work, done, failed)
        self._verify_task.progressed.connect(self.w.audit.show_progress)

    def _cancel_verify(self) -> None:
        if self._verify_task is not None:
            self._verify_task.context.cancel()


def _filtered(notes: list[Note], f: NoteFilter) -> list[Note]:
    return [
        n
        for n in notes
        if (f.statuses is None or n.status in f.statuses)
        and (f.scopes is None or n.scope in f.scopes)
        and (f.kinds is None or n.kind in f.kinds)
    ]


def _cascade_html(preview: conversation_control.ConversationDeletion) -> str:
    e = html.escape

    def items(views: list[Any]) -> str:
        return (
            "".join(
                f"<li>{e(v.text or '[removed]')} <i>({e(v.note.id)})</i>: {e(v.reason)}</li>"
                for v in views
            )
            or "<li><i>none</i></li>"
        )

    others = (
        f"<p>And {preview.others_closing} notes about other participants close.</p>"
        if preview.others_closing
        else ""
    )
    return (
        f"<p>Deleting conversation <b>{e(preview.conversation)}</b> removes its transcript "
        "and key for everyone in it.</p>"
        f"<p><b>These notes close:</b></p><ul>{items(preview.cascade.closes)}</ul>"
        f"<p><b>These notes survive:</b></p><ul>{items(preview.cascade.survives)}</ul>"
        + (
            f"<p><b>These notes reopen:</b></p><ul>{items(preview.cascade.reopens)}</ul>"
            if preview.cascade.reopens
            else ""
        )
        + others
    )
