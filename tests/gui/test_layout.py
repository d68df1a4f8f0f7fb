"""Issue 8, "Layout and plain language" (items 13-17): each test drives the real window
offscreen, with its real dialogs answered by `Modals` where one opens."""

from __future__ import annotations

import html
import stat
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QFileDialog, QHeaderView, QMenu, QMessageBox, QWidget

from engram.control import conversations as conversation_control
from engram.control.erasure_report import ErasureReport, FileScan, PageRewrite
from engram.gui.controller import InspectorController
from engram.gui.controllers.conversations import cascade_html
from engram.gui.dialogs import ReportDialog, ShortcutsDialog, TypedConfirmDialog
from engram.gui.highlight import MARK_STYLE
from engram.gui.main_window import MainWindow
from engram.gui.summaries import erasure_summary
from engram.gui.widgets import HTML_ROLE, undescribed
from engram.model.ids import ConversationId
from tests.gui.conftest import (
    SIGNAL_TIMEOUT,
    Inspector,
    Modals,
    note_texts,
    open_person,
    select_note,
    show_tab,
    unlock,
    wait_idle,
)

FITS = 1024


def _popup_action(qtbot: Any, text: str) -> None:
    """Trigger an entry of the context menu that just opened."""
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu), timeout=2000)
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    action = next(a for a in menu.actions() if a.text() == text)
    action.trigger()
    menu.close()


# ---- 13: the window fits 1024x700 -------------------------------------------------------


def test_item13_window_fits_1024_and_nothing_widens_it(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    assert window.minimumSizeHint().width() <= FITS
    window.resize(FITS, 700)
    # What widened it before: the as-of moment, a long store path, a long count.
    window.filters.time_travel.setChecked(True)
    wait_idle(qtbot, inspector)
    window.store_label.setText("/a/very/long/path/" * 20 + "store.engram")
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        wait_idle(qtbot, inspector)
        qtbot.wait(20)
        assert window.minimumSizeHint().width() <= FITS, window.tabs.tabText(index)
        assert window.width() <= FITS
    assert window.store_label.toolTip().endswith("store.engram")  # said in full on hover


def test_item13_text_column_takes_the_spare_width_and_numbers_align_right(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    header = window.table.horizontalHeader()
    assert header.sectionResizeMode(0) == QHeaderView.ResizeMode.Stretch
    window.resize(FITS, 700)
    qtbot.wait(50)
    others = sum(
        header.sectionSize(c) for c in range(1, header.count()) if not header.isSectionHidden(c)
    )
    assert header.sectionSize(0) == window.table.viewport().width() - others
    assert header.sectionSize(0) >= 150  # readable at 1024 wide
    before, kind = header.sectionSize(0), header.sectionSize(1)
    inspector.controller.column_choosers[0].show_column(1, False)  # hide Kind
    qtbot.wait(20)
    assert header.sectionSize(0) == before + kind  # its width went to the text
    model = window.notes_model
    for column in (3, 8):  # confidence, corroborators
        align = model.index(0, column).data(Qt.ItemDataRole.TextAlignmentRole)
        assert Qt.AlignmentFlag(int(align)) & Qt.AlignmentFlag.AlignRight


def test_item13_columns_chosen_from_the_header_menu_are_kept(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    header = window.table.horizontalHeader()
    point = QPoint(header.sectionViewportPosition(1) + 5, 5)
    header.customContextMenuRequested.emit(point)
    _popup_action(qtbot, "Kind")
    assert header.isSectionHidden(1)
    # The same settings, another window: the choice holds.
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    again = MainWindow()
    qtbot.addWidget(again)
    InspectorController(again, settings=settings)
    assert again.table.horizontalHeader().isSectionHidden(1)
    assert not again.table.horizontalHeader().isSectionHidden(0)


def test_item13_detail_pane_collapses_where_it_has_nothing_to_show(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    assert window.detail.isVisible()
    for tab in (window.conversations, window.candidates, window.audience, window.audit):
        show_tab(qtbot, inspector, tab)
        assert not window.detail.isVisible()
    show_tab(qtbot, inspector, window.timeline_tab)
    assert window.detail.isVisible()


# ---- 14: meaning, not ids ---------------------------------------------------------------


def test_item14_conversations_and_notes_by_their_words_ids_in_tooltips(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    show_tab(qtbot, inspector, window.conversations)
    listing = window.conversations.list
    first = listing.item(0)
    conversation = str(first.data(Qt.ItemDataRole.UserRole + 2))
    assert conversation not in first.text()
    assert "maya" in first.text() and "“Bonjour! I just moved to Lyon" in first.text()
    assert conversation in first.toolTip()
    # "Copy id" puts the id on the clipboard.
    listing.customContextMenuRequested.emit(listing.visualItemRect(first).center())
    _popup_action(qtbot, "Copy id")
    assert QGuiApplication.clipboard().text() == conversation
    # A note's source by its day; the ids in the tooltip.
    show_tab(qtbot, inspector, window.tabs.widget(0))
    row = note_texts(inspector).index("Lives in Grenoble.")
    source = window.notes_model.index(row, 7)
    assert str(source.data()).startswith("a conversation, ")
    assert "conversation c" in str(source.data(Qt.ItemDataRole.ToolTipRole))
    note = select_note(qtbot, inspector, "Lives in Grenoble.")
    window.table.customContextMenuRequested.emit(
        window.table.visualRect(window.notes_model.index(row, 0)).center()
    )
    _popup_action(qtbot, "Copy id")
    assert QGuiApplication.clipboard().text() == note
    assert note not in window.detail.browser.toPlainText()


def test_item14_closing_reason_reads_as_a_sentence(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    window.filters.status.setCurrentIndex(1)  # every interval
    wait_idle(qtbot, inspector)
    select_note(qtbot, inspector, "Lives in Lyon.")
    shown = window.detail.browser.toPlainText()
    assert "Closed by ‘Lives in Grenoble.’ — a contradiction, " in shown
    closed = inspector.controller.notes.detail
    assert closed is not None and closed["closed_by"]["note"] not in shown


def test_item14_cascade_preview_shows_each_notes_true_reason(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    show_tab(qtbot, inspector, window.conversations)
    window.conversations.list.setCurrentRow(0)
    wait_idle(qtbot, inspector)
    inspector.prompts.typed = None  # look, then cancel
    window.delete_conversation_action.trigger()
    wait_idle(qtbot, inspector)
    _title, shown = inspector.prompts.confirmations[-1]
    session = inspector.controller.session
    assert session is not None
    preview = conversation_control.preview_delete(
        session, ConversationId(str(window.conversations.current()))
    )
    assert shown == cascade_html(preview)
    notes = [*preview.cascade.closes, *preview.cascade.survives, *preview.cascade.reopens]
    assert notes
    for item in notes:
        assert html.escape(item.reason[1:]) in shown  # the reason control gives, each note
        assert item.note.id not in shown


def test_item14_erasure_report_is_a_readable_summary_with_copy_and_save(
    qtbot: Any,
    real_inspector: Inspector,
    demo_path: Path,
    modals: Modals,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    seen: list[str] = []
    saved = home / "Documents" / "maya-was-erased.txt"  # offered in the documents folder

    def confirm(dialog: QWidget) -> None:
        assert isinstance(dialog, TypedConfirmDialog)
        dialog.field.setText("maya")
        dialog.action.click()

    reports: list[ReportDialog] = []

    def read_copy_save(dialog: QWidget) -> None:
        assert isinstance(dialog, ReportDialog)
        reports.append(dialog)
        seen.append(dialog.text.toPlainText())
        dialog.copy.click()
        modals.expect(save_as)
        QTimer.singleShot(0, dialog.save.click)  # a save dialog opens above the report

    def save_as(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        dialog.accept()
        QTimer.singleShot(50, reports[0].reject)  # then close the report

    modals.expect(confirm)
    modals.expect(read_copy_save)
    inspector.window.erase_action.trigger()
    qtbot.waitUntil(lambda: bool(seen), timeout=SIGNAL_TIMEOUT)
    wait_idle(qtbot, inspector)
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=SIGNAL_TIMEOUT)
    text = seen[0]
    assert not text.lstrip().startswith("{")
    for words in (
        "Keys destroyed:",
        "Rows deleted:",
        "Files scanned:",
        "Result: The erasure held: nothing readable about maya remains",
    ):
        assert words in text
    assert QGuiApplication.clipboard().text() == text
    assert saved.read_text().strip() == text.strip()
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert modals.unexpected == []


def test_item14_erasure_summary_says_plainly_when_it_did_not_hold() -> None:
    report = ErasureReport(
        person="maya",
        erased_at="2026-11-03T10:00:00Z",
        actor="staff:dana",
        erasure_record=1,
        keys_destroyed=("k1", "k2"),
        rows_deleted={"notes": 4, "journal": 9},
        conversations_deleted=0,
        turns_excised=0,
        pseudonymized_rows=0,
        clear_id_rows={},
        wal_checkpoint="busy",
        page_rewrite=PageRewrite("complete", 9, 8),
        frames=0,
        checkpointed=0,
        asked_others_to_let_go=True,
        raw_file_scan=FileScan(("s.engram", "s.engram-wal"), looked_for=5, found=2),
        pending_erasures=(1,),
    )
    text = erasure_summary(report)
    assert "Keys destroyed: 2" in text and "Rows deleted: 13 (9 journal entries, 4 notes)." in text
    assert "s.engram, s.engram-wal" in text
    assert "did NOT fully hold" in text and "2 traces" in text
    assert "erasure held." not in text


# ---- 15: search -------------------------------------------------------------------------


def _search(qtbot: Any, inspector: Inspector, words: str) -> None:
    panel = inspector.window.conversations
    panel.query.setText(words)
    with qtbot.waitSignal(inspector.controller.searched, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(panel.query, Qt.Key.Key_Return)
    wait_idle(qtbot, inspector)


def _open_conversation_with(qtbot: Any, inspector: Inspector, words: str) -> None:
    panel = inspector.window.conversations
    for row in range(panel.list.count()):
        panel.list.setCurrentRow(row)
        wait_idle(qtbot, inspector)
        if words in panel.transcript.toPlainText():
            return
    raise AssertionError(f"no conversation says {words!r}")


def test_item15_matched_words_are_marked_by_their_stems(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    show_tab(qtbot, inspector, window.conversations)
    _open_conversation_with(qtbot, inspector, "moved to Lyon")
    # stems like "suggestions" in English and in French (Maya's language note says French,
    # and search stems in it at once: issue 18 item 4)
    _search(qtbot, inspector, "suggestion")
    panel = window.conversations
    marked = [str(panel.results.item(r).data(HTML_ROLE)) for r in range(panel.results.count())]
    assert any(f"<span style='{MARK_STYLE}'>suggestions</span>" in html for html in marked)
    transcript = panel.transcript.toHtml()
    assert ">suggestions</span>" in transcript
    assert "font-weight:700" in transcript or "font-weight:600" in transcript


def test_item15_escape_clears_and_scope_change_reruns(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    show_tab(qtbot, inspector, window.conversations)
    panel = window.conversations
    panel.list.setCurrentRow(0)
    wait_idle(qtbot, inspector)
    _search(qtbot, inspector, "Grenoble")
    with qtbot.waitSignal(inspector.controller.searched, timeout=SIGNAL_TIMEOUT) as got:
        panel.everywhere.setChecked(True)  # the scope changes: the search runs again
    assert got.args == ["*"]
    wait_idle(qtbot, inspector)
    everywhere = panel.results.count()
    assert everywhere >= 2
    panel.query.setFocus()
    qtbot.keyClick(panel.query, Qt.Key.Key_Escape)
    assert panel.query.text() == "" and not panel.results.isVisible()
    # The notes' search field too.
    show_tab(qtbot, inspector, window.tabs.widget(0))
    window.filters.search.setText("Lyon")
    window.filters.search.setFocus()
    qtbot.keyClick(window.filters.search, Qt.Key.Key_Escape)
    assert window.filters.search.text() == ""


def test_item15_filters_and_queries_reset_when_the_person_changes(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    window.filters.kind.setCurrentIndex(2)
    window.filters.search.setText("Lyon")
    window.conversations.query.setText("bakery")
    wait_idle(qtbot, inspector)
    open_person(qtbot, inspector, "sam")
    assert window.filters.search.text() == ""
    assert window.filters.kind.currentIndex() == 0
    assert window.conversations.query.text() == ""
    assert "filters and searches were reset" in window.statusBar().currentMessage()
    assert window.notes_model.rowCount() > 0


# ---- 16: keyboard and accessibility -----------------------------------------------------


def test_item16_tab_leaves_the_table(qtbot: Any, inspector: Inspector, demo_path: Path) -> None:
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    window.table.setFocus()
    window.table.selectRow(0)
    qtbot.keyClick(window.table, Qt.Key.Key_Tab)
    assert not window.table.hasFocus()
    for table in (window.candidates.table, window.audit.table):
        assert not table.tabKeyNavigation()


def test_item16_timeline_takes_focus_moves_with_arrows_and_explains_itself(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    show_tab(qtbot, inspector, window.timeline_tab)
    timeline = window.timeline
    assert timeline.focusPolicy() & Qt.FocusPolicy.TabFocus
    timeline.setFocus()
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT) as first:
        qtbot.keyClick(timeline, Qt.Key.Key_Down)
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT) as second:
        qtbot.keyClick(timeline, Qt.Key.Key_Down)
    assert first.args != second.args
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT) as back:
        qtbot.keyClick(timeline, Qt.Key.Key_Up)
    assert back.args == first.args
    tip = timeline.tooltip_for(0)
    assert "→" in tip and timeline.row_at(timeline.bar_rect(0).center()) == 0
    legend = window.timeline_legend
    assert legend.isVisible() and "closed" in " ".join(
        w.text() for w in legend.findChildren(type(window.filters.count))
    )


def test_item16_every_interactive_widget_has_a_name_and_a_tooltip(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    window = inspector.window
    assert undescribed(window) == []  # the unlock page too
    unlock(qtbot, inspector, demo_path)
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        wait_idle(qtbot, inspector)
    assert undescribed(window) == []


# ---- 17: help ---------------------------------------------------------------------------


def test_item17_about_shows_version_store_and_licences(
    qtbot: Any, real_inspector: Inspector, demo_path: Path, modals: Modals
) -> None:
    from engram import __version__

    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    shown: list[str] = []

    def read(dialog: QWidget) -> None:
        assert isinstance(dialog, QMessageBox)
        shown.append(dialog.text())
        dialog.reject()

    modals.expect(read)
    inspector.window.about_action.trigger()
    assert shown and __version__ in shown[0] and str(demo_path) in shown[0]
    assert "Apache License 2.0" in shown[0] and "LGPL" in shown[0]
    assert modals.unexpected == []


def test_item17_keyboard_shortcuts_listed_from_the_actions(
    qtbot: Any, real_inspector: Inspector, demo_path: Path, modals: Modals
) -> None:
    inspector = real_inspector
    window = inspector.window
    unlock(qtbot, inspector, demo_path)
    listed: list[list[tuple[str, str]]] = []

    def read(dialog: QWidget) -> None:
        assert isinstance(dialog, ShortcutsDialog)
        listed.append(dialog.rows())
        dialog.reject()

    modals.expect(read)
    qtbot.keyClick(window, Qt.Key.Key_F1)
    assert listed
    rows = dict(listed[0])
    for action in window.findChildren(type(window.lock_action)):
        keys = action.shortcut().toString()
        if keys and action.parent() is window:
            assert rows[action.text().replace("&", "").rstrip("…")] == keys
    assert rows["Lock"] == "Ctrl+L" and rows["Keyboard shortcuts"] == "F1"
    assert modals.unexpected == []
