"""The inspector's composition root: one hub, one small controller per panel, and the
links between panels. Behaviour lives in gui/controllers/; see its package docstring."""

from __future__ import annotations

from PySide6.QtCore import QObject, QSettings, SignalInstance
from PySide6.QtWidgets import QApplication

from engram.control.session import PersonSession
from engram.gui.candidates_panel import COLUMNS as CANDIDATE_COLUMNS
from engram.gui.controllers.adding import AddingController
from engram.gui.controllers.agents import AgentSettingsController
from engram.gui.controllers.audience import AudienceController
from engram.gui.controllers.audit import AuditController
from engram.gui.controllers.audit_log import AuditLogController
from engram.gui.controllers.backup import BackupController
from engram.gui.controllers.bulk import BulkNotesController
from engram.gui.controllers.candidates import CandidatesController
from engram.gui.controllers.conversations import ConversationsController
from engram.gui.controllers.help import HelpController
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.memory_import import MemoryImportController
from engram.gui.controllers.notes import NotesController
from engram.gui.controllers.people import PeopleController
from engram.gui.controllers.person_actions import PersonActionsController
from engram.gui.controllers.recent import RecentStoresMenu
from engram.gui.controllers.review import ReviewController
from engram.gui.controllers.saved_filters import SavedFiltersController
from engram.gui.controllers.store_key import StoreKeyController
from engram.gui.controllers.store_lock import StoreLockController
from engram.gui.controllers.timeline import TimelineController
from engram.gui.controllers.undo import UndoController
from engram.gui.controllers.visits import VisitsController
from engram.gui.idle_lock import DEFAULT_MINUTES, IdleLock
from engram.gui.main_window import MainWindow
from engram.gui.prompts import PromptHost, Prompts
from engram.gui.tasks import TaskRunner
from engram.gui.widgets import ColumnChooser
from engram.store.store import Store


class InspectorController(QObject):
    """Builds the controllers and wires what crosses panels. The signals below are the
    ones tests and tools wait on; each belongs to the controller that emits it."""

    unlocked: SignalInstance
    locked: SignalInstance
    person_opened: SignalInstance
    notes_shown: SignalInstance
    detail_shown: SignalInstance
    changed: SignalInstance
    recorded: SignalInstance
    failed: SignalInstance
    preview_shown: SignalInstance
    audit_shown: SignalInstance
    candidates_shown: SignalInstance
    transcript_shown: SignalInstance
    searched: SignalInstance
    verified: SignalInstance
    exported: SignalInstance

    def __init__(
        self,
        window: MainWindow,
        *,
        prompts: PromptHost | None = None,
        settings: QSettings | None = None,
        idle: IdleLock | None = None,
        actor: str | None = None,
    ) -> None:
        super().__init__(window)
        self.w = window
        settings = settings or QSettings()
        if idle is None:
            minutes = float(str(settings.value("lock_minutes", DEFAULT_MINUTES)))
            idle = IdleLock(minutes=minutes, parent=self)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(idle)
            # A filter left on the application outlives its window: every event of every
            # later window would pass through it (and through each one before it).
            window.destroyed.connect(lambda: app.removeEventFilter(idle))
        self.idle = idle
        self.tasks = TaskRunner(self)
        self.prompts: PromptHost = prompts or Prompts(
            window, [window.lock_action, window.quit_action]
        )
        self.hub = hub = Hub(window, self.tasks, self.prompts, actor)
        self.store_lock = StoreLockController(hub, settings, idle)
        self.recent = RecentStoresMenu(self.store_lock)
        self.people = PeopleController(hub)
        self.notes = NotesController(hub)
        self.timeline = TimelineController(hub)
        self.conversations = ConversationsController(hub)
        self.candidates = CandidatesController(hub)
        self.audience = AudienceController(hub)
        self.audit = AuditController(hub)
        self.audit_log = AuditLogController(hub)
        self.person_actions = PersonActionsController(hub)
        self.review = ReviewController(hub)
        self.memory_import = MemoryImportController(hub)
        self.undo = UndoController(hub, self.notes)
        self.bulk = BulkNotesController(hub, self.notes)
        self.visits = VisitsController(hub, self.notes, settings)
        self.saved_filters = SavedFiltersController(hub, self.notes, settings)
        self.adding = AddingController(hub)
        self.help = HelpController(hub)
        self.backup = BackupController(hub, self.store_lock)
        self.store_key = StoreKeyController(hub)
        self.agent_settings = AgentSettingsController(hub)
        self._link_panels()
        self._choose_columns(settings)
        for name, signal in (
            ("unlocked", self.store_lock.unlocked),
            ("locked", self.store_lock.locked),
            ("person_opened", self.people.person_opened),
            ("notes_shown", self.notes.notes_shown),
            ("detail_shown", self.notes.detail_shown),
            ("changed", hub.changed),
            ("recorded", hub.recorded),
            ("failed", hub.failed),
            ("preview_shown", self.audience.preview_shown),
            ("audit_shown", self.audit_log.audit_shown),
            ("candidates_shown", self.candidates.candidates_shown),
            ("transcript_shown", self.conversations.transcript_shown),
            ("searched", self.conversations.searched),
            ("verified", self.audit.verified),
            ("exported", self.person_actions.exported),
        ):
            setattr(self, name, signal)
        self.store_lock.failed.connect(hub.failed)

    def _link_panels(self) -> None:
        w, hub = self.w, self.hub
        w.refresh_action.triggered.connect(hub.reload_requested)
        w.timeline.note_clicked.connect(self.notes.select_note)
        self.conversations.note_requested.connect(self._show_note)
        # Disclosed to: each use opens what the agent saw (issue 21 item 6).
        w.detail.sight_requested.connect(self.conversations.show_turn_sight)
        # An audit row leads to what it is about (issue 21 item 5).
        self.audit_log.note_requested.connect(self._show_note)
        self.audit_log.candidate_requested.connect(self.candidates.show_candidate)
        self.undo.candidate_undone.connect(self.candidates.show_pending)
        self.audit_log.turn_requested.connect(self.conversations.open_turn)
        self.notes.detail_shown.connect(
            lambda note: self.audit_log.offer_note(note, self.notes.detail)
        )
        self.notes.note_selected.connect(self.timeline.show_selected)
        for turn_link in (
            w.detail.turn_requested,
            w.candidates.turn_requested,
        ):
            turn_link.connect(self.conversations.open_turn)
        self.tasks.busy_changed.connect(
            lambda busy: w.busy_label.setText("working…" if busy else "")
        )
        self.tasks.failed.connect(hub.fail)
        w.jobs_strip.attach(self.tasks)
        self.people.listed.connect(self.adding.people_listed)
        self.adding.person_added.connect(self.people.open_person)

    def _show_note(self, note: str) -> None:
        self.w.tabs.setCurrentIndex(0)
        self.notes.select_note(note)

    def _choose_columns(self, settings: QSettings) -> None:
        """Each table's header shows or hides its columns; the choice is kept."""
        w = self.w
        self.column_choosers = [
            ColumnChooser(
                w.table.horizontalHeader(),
                settings,
                "columns/notes",
                frozenset({0}),
                hidden_first=(5, 7, 8),  # valid to, source, corroborators: in the detail
            ),
            ColumnChooser(
                w.candidates.table.horizontalHeader(),
                settings,
                "columns/candidates",
                frozenset({len(CANDIDATE_COLUMNS) - 1}),
            ),
            ColumnChooser(
                w.audit.table.horizontalHeader(), settings, "columns/audit", frozenset({2})
            ),
        ]

    # ---- what app.py, tests and tools reach for -----------------------------------------

    @property
    def store(self) -> Store | None:
        """The open store (None while locked)."""
        return self.hub.store

    @property
    def session(self) -> PersonSession | None:
        """The person on screen."""
        return self.hub.session

    def unlock(self, path: str, passphrase: str, remember: bool) -> None:
        """Open a store (as the unlock page does)."""
        self.store_lock.unlock(path, passphrase, remember)

    def lock(self, message: str = "Locked.") -> None:
        """Lock: close every dialog, drop every decrypted thing and the key."""
        self.store_lock.lock(message)

    def open_person(self, person: str) -> None:
        """Show one person's memory."""
        self.people.open_person(person)
