"""The inspector's window: layout only. Behaviour lives in gui.controller."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QListWidget,
    QMainWindow,
    QMenu,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engram.gui.audience_panel import AudiencePanel
from engram.gui.audit_panel import AuditPanel
from engram.gui.candidates_panel import CandidatesPanel
from engram.gui.conversations_panel import ConversationsPanel
from engram.gui.detail_panel import DetailPanel
from engram.gui.empty_state import EmptyState
from engram.gui.jobs_strip import JobsStrip
from engram.gui.notes_filters import NotesFilterBar, ReadOnlyBanner, TimeTravelBanner
from engram.gui.notes_model import (
    NOTE_ID_ROLE,
    NotesTableModel,
    watch_visible_rows,
)
from engram.gui.review_banner import ReviewCopyBanner
from engram.gui.timeline_view import TimelineLegend, TimelinePager, TimelineView
from engram.gui.unlock_page import UnlockPage
from engram.gui.widgets import (
    ElidedLabel,
    copy_id_menu,
    describe,
    tip_from_name,
)

APP_NAME = "Engram Inspector"
PERSON_ROLE = Qt.ItemDataRole.UserRole + 3  # the people list's person id


class MainWindow(QMainWindow):
    """Unlock page or inspector, menus, status bar."""

    closing = Signal()  # the window is about to close: lock first

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle(APP_NAME)
        self.resize(1280, 800)
        self.stack = QStackedWidget()
        self.setCentralWidget(self.stack)
        self.unlock_page = UnlockPage()
        self.stack.addWidget(self.unlock_page)
        self.inspector = QWidget()
        self.stack.addWidget(self.inspector)
        self._build_inspector()
        self._build_actions()
        self._build_status()
        for action in self.targeted_actions():
            action.setEnabled(False)
        tip_from_name(self)

    def _build_inspector(self) -> None:
        layout = QVBoxLayout(self.inspector)
        layout.setContentsMargins(4, 4, 4, 4)
        # Above everything while the store is open read-only (issue 17 item 12).
        self.read_only_banner = ReadOnlyBanner()
        layout.addWidget(self.read_only_banner)
        self.review_banner = ReviewCopyBanner()  # a review copy says so (issue 21 item 3)
        layout.addWidget(self.review_banner)
        split = QSplitter(Qt.Orientation.Horizontal)
        people = QWidget()
        people_layout = QVBoxLayout(people)
        people_layout.setContentsMargins(0, 0, 0, 0)
        people_layout.addWidget(QLabel("<b>People</b>"))
        self.people = QListWidget()
        describe(self.people, "People in this store", "Whose memory to show (right-click: Copy id)")
        copy_id_menu(self.people, self._person_id_at)
        self.people.setWordWrap(True)  # long names wrap; never a sideways scroll bar
        self.people.setSpacing(4)  # each person's three lines read as one entry
        self.people.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        people_layout.addWidget(self.people)
        split.addWidget(people)

        self.tabs = QTabWidget()
        notes_tab = QWidget()
        notes_layout = QVBoxLayout(notes_tab)
        self.filters = NotesFilterBar()
        notes_layout.addWidget(self.filters)
        self.time_travel_banner = TimeTravelBanner()
        notes_layout.addWidget(self.time_travel_banner)
        self.notes_model = NotesTableModel()
        self.table = QTableView()
        self.table.setModel(self.notes_model)
        describe(
            self.table,
            "Notes",
            "The person's notes; right-click a row to copy its id, the header to choose columns",
        )
        self.table.setTabKeyNavigation(False)  # Tab leaves the table
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setIconSize(self.notes_model.badges.extent())  # the scope badges
        watch_visible_rows(self.table, self.notes_model)
        copy_id_menu(self.table, self._note_id_at)
        header = self.table.horizontalHeader()
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(True)
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(40)
        badge = self.notes_model.badges.extent().width() + 8  # the badge and the cell margins
        widths = (270, 74, max(84, badge), 82, 118, 118, 64, 150, 60)
        for column, width in enumerate(widths):
            header.resizeSection(column, width)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)  # the spare width
        notes_layout.addWidget(self.table, 1)
        self.empty_state = EmptyState()
        notes_layout.addWidget(self.empty_state, 1)
        self.tabs.addTab(notes_tab, "&Notes")

        self.timeline = TimelineView()
        self.timeline_scroll = QScrollArea()
        self.timeline_scroll.setWidgetResizable(True)
        self.timeline_scroll.setWidget(self.timeline)
        self.timeline_tab = QWidget()
        timeline_layout = QVBoxLayout(self.timeline_tab)
        timeline_layout.setContentsMargins(0, 0, 0, 0)
        self.timeline_legend = TimelineLegend()
        timeline_layout.addWidget(self.timeline_legend)
        self.timeline_pager = TimelinePager()  # back through every note (issue 21 item 5)
        timeline_layout.addWidget(self.timeline_pager)
        timeline_layout.addWidget(self.timeline_scroll, 1)
        self.tabs.addTab(self.timeline_tab, "&Timeline")
        self.conversations = ConversationsPanel()
        self.tabs.addTab(self.conversations, "&Conversations")
        self.candidates = CandidatesPanel()
        self.tabs.addTab(self.candidates, "Ca&ndidates")
        self.audience = AudiencePanel()
        self.tabs.addTab(self.audience, "&Audience preview")
        self.audit = AuditPanel()
        self.tabs.addTab(self.audit, "Au&dit")
        split.addWidget(self.tabs)
        tips = (
            "The person's notes, with filters and time travel",
            "When each note held, as bars over time",
            "The person's conversations and their transcripts",
            "What learning suggested, waiting for a decision",
            "What the agent would see for a given audience",
            "Every change, who made it, and the integrity check",
        )
        for index, tip in enumerate(tips):
            self.tabs.setTabToolTip(index, f"{tip} (Ctrl+{index + 1})")
        describe(self.tabs.tabBar(), "Views", "Choose a view (Ctrl+1 … Ctrl+6)")

        self.detail = DetailPanel()
        split.addWidget(self.detail)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 3)
        split.setStretchFactor(2, 2)
        split.setSizes([136, 794, 350])  # the notes get the width; the detail what it needs
        self.splitter = split
        layout.addWidget(split, 1)  # the banner above keeps its own height
        self.tabs.currentChanged.connect(self._collapse_detail)

    def _note_id_at(self, point: QPoint) -> str | None:
        index = self.table.indexAt(point)
        if not index.isValid():
            return None
        found = self.notes_model.index(index.row(), 0).data(NOTE_ID_ROLE)
        return str(found) if found else None

    def _person_id_at(self, point: QPoint) -> str | None:
        item = self.people.itemAt(point)
        found = item.data(PERSON_ROLE) if item is not None else None
        return str(found) if found else None

    def _collapse_detail(self, index: int) -> None:
        """The note detail shows beside the notes and the timeline; other tabs have no note
        to show, and get its width."""
        self.detail.setVisible(self.tabs.widget(index) in (self.tabs.widget(0), self.timeline_tab))

    def _action(self, text: str, shortcut: str | QKeySequence.StandardKey | None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        self.open_action = self._action("&Open store…", QKeySequence.StandardKey.Open)
        self.new_store_action = self._action("&New store…", QKeySequence.StandardKey.New)
        self.open_demo_action = self._action("Open the &demo", None)
        self.add_person_action = self._action("&Add person…", None)
        self.add_note_action = self._action("&Add note…", "Ctrl+Shift+N")
        self.lock_action = self._action("&Lock", "Ctrl+L")
        self.change_passphrase_action = self._action("Change &passphrase…", None)
        self.forget_key_action = self._action("Forget the &key on this computer…", None)
        self.export_action = self._action("&Export person…", "Ctrl+E")
        self.report_action = self._action("Save &access report…", "Ctrl+Shift+R")
        self.backup_action = self._action("&Back up…", None)  # issue 21 item 1
        self.restore_action = self._action("Res&tore from backup…", None)
        self.export_review_action = self._action("Export review &copy…", None)
        self.import_review_action = self._action("&Import review…", None)
        self.import_memories_action = self._action("Import &memories…", None)  # issue 21 item 10
        self.agent_settings_action = self._action("A&gent settings…", None)  # issue 21 item 9
        self.undo_action = self._action("&Undo", QKeySequence.StandardKey.Undo)
        # Spelled out: the platform's Quit binding is empty on Windows and offscreen, and
        # Ctrl+Q must quit (locking first) from anywhere, every dialog included.
        self.quit_action = self._action("&Quit", "Ctrl+Q")
        self.edit_action = self._action("&Edit text…", "F2")
        self.scope_action = self._action("Change &scope…", "Ctrl+Shift+S")
        self.delete_action = self._action("&Delete note…", QKeySequence.StandardKey.Delete)
        self.forget_action = self._action("&Forget selected notes…", None)  # issue 21 item 7
        self.forget_about_action = self._action("Forget everything a&bout…", None)
        self.delete_conversation_action = self._action("Delete &conversation…", "Ctrl+Shift+D")
        self.erase_action = self._action("E&rase person…", "Ctrl+Shift+Del")
        self.verify_action = self._action("&Verify integrity", "Ctrl+I")
        self.reanchor_action = self._action("Re-anchor this c&opy…", None)
        self.learn_action = self._action("&Learn from new turns", "Ctrl+Shift+L")
        self.find_action = self._action("&Find in notes", QKeySequence.StandardKey.Find)
        self.time_travel_action = self._action("&Time travel", "Ctrl+T")
        self.refresh_action = self._action("&Refresh", QKeySequence.StandardKey.Refresh)
        self.about_action = self._action("&About Engram", None)
        self.shortcuts_action = self._action("&Keyboard shortcuts", "F1")
        self.user_guide_action = self._action("&User guide", None)
        # Filled each time it opens (gui/controllers/recent.py): stores that are gone grey out.
        self.open_recent_menu = QMenu("Open &recent", self)
        self.open_recent_menu.setToolTipsVisible(True)
        menus: tuple[tuple[str, list[QAction | QMenu | None]], ...] = (
            (
                "&File",
                [
                    self.new_store_action,
                    self.open_action,
                    self.open_recent_menu,
                    self.open_demo_action,
                    self.lock_action,
                    self.export_action,
                    self.report_action,
                    self.export_review_action,
                    self.import_review_action,
                    self.import_memories_action,
                    None,
                    self.backup_action,
                    self.restore_action,
                    None,
                    self.agent_settings_action,
                    None,
                    self.change_passphrase_action,
                    self.forget_key_action,
                    None,
                    self.quit_action,
                ],
            ),
            (
                "&Note",
                [
                    self.undo_action,
                    None,
                    self.add_note_action,
                    self.edit_action,
                    self.scope_action,
                    self.delete_action,
                    None,
                    self.forget_action,
                    self.forget_about_action,
                ],
            ),
            (
                "&Person",
                [
                    self.add_person_action,
                    None,
                    self.delete_conversation_action,
                    self.erase_action,
                    None,
                    self.learn_action,
                    self.verify_action,
                    self.reanchor_action,
                ],
            ),
            ("&View", [self.find_action, self.time_travel_action, self.refresh_action]),
            ("&Help", [self.user_guide_action, self.shortcuts_action, self.about_action]),
        )
        for title, actions in menus:
            menu = self.menuBar().addMenu(title)
            menu.setToolTipsVisible(True)  # why an action is off (time travel, say) shows
            for action in actions:
                if action is None:
                    menu.addSeparator()
                elif isinstance(action, QMenu):
                    menu.addMenu(action)
                else:
                    menu.addAction(action)
        self.tab_actions = []
        for index in range(self.tabs.count()):
            name = self.tabs.tabText(index).replace("&", "")
            action = self._action(f"Show the {name} tab", f"Ctrl+{index + 1}")
            action.triggered.connect(lambda _c=False, i=index: self.tabs.setCurrentIndex(i))
            self.tab_actions.append(action)

    def _build_status(self) -> None:
        bar = self.statusBar()
        self.store_label = ElidedLabel("")  # a long path never widens the window
        self.store_label.setAccessibleName("Open store")
        self.actor_label = QLabel("")
        self.actor_label.setAccessibleName("Acting as")
        self.integrity_label = QLabel("")
        self.integrity_label.setAccessibleName("Integrity")
        self.busy_label = QLabel("")
        self.busy_label.setAccessibleName("Background work")
        self.jobs_strip = JobsStrip()  # verify, export, report…: progress and Cancel
        for label in (self.store_label, self.actor_label, self.integrity_label, self.busy_label):
            bar.addPermanentWidget(label)
        bar.addPermanentWidget(self.jobs_strip)

    def shortcut_rows(self) -> list[tuple[str, str]]:
        """Every action of the window that has a shortcut, as (what it does, the keys) in
        menu order — read from the actions themselves, so the list cannot drift."""
        rows = []
        for action in self.actions():
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            if keys:
                rows.append((action.text().replace("&", "").rstrip("…"), keys))
        return rows

    def targeted_actions(self) -> tuple[QAction, ...]:
        """The actions that act on something chosen; disabled while there is nothing."""
        return (
            self.add_note_action,
            self.edit_action,
            self.scope_action,
            self.delete_action,
            self.delete_conversation_action,
            self.export_action,
            self.report_action,
            self.export_review_action,
            self.import_review_action,
            self.import_memories_action,
            self.undo_action,
            self.erase_action,
            self.learn_action,
            self.verify_action,
            self.reanchor_action,
        )

    def closeEvent(self, event: QCloseEvent) -> None:
        self.closing.emit()
        super().closeEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # light to dark: the rows follow
            self.notes_model.restyle()
        super().changeEvent(event)

    def show_inspector(self, shown: bool) -> None:
        """Switch between the unlock page and the inspector. Actions that need a target
        (a note, a conversation, a person) are enabled by their controllers when there is
        one."""
        self.stack.setCurrentWidget(self.inspector if shown else self.unlock_page)
        for action in (
            self.lock_action,
            self.add_person_action,
            self.find_action,
            self.time_travel_action,
            self.refresh_action,
            *self.tab_actions,
        ):
            action.setEnabled(shown)
