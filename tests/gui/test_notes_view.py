"""The notes table like a user uses it: filter, sort, time travel, detail, timeline."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from PySide6.QtCore import QDateTime, Qt, QTimeZone

from engram.gui.notes_model import COLUMNS
from engram.model.notes import NoteStatus
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, note_texts, show_tab, unlock, wait_idle

ASCENDING, DESCENDING = Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder


def _choose(combo: Any, text: str) -> None:
    combo.setCurrentIndex(combo.findText(text))


def _column(inspector: Inspector, name: str) -> list[str]:
    """A column as read aloud (the scope column shows a badge: its name is its accessible
    text)."""
    model = inspector.window.notes_model
    column = [key for key, _ in COLUMNS].index(name)
    role = Qt.ItemDataRole.AccessibleTextRole if name == "scope" else Qt.ItemDataRole.DisplayRole
    return [str(model.index(r, column).data(role)) for r in range(model.rowCount())]


def _refreshed(qtbot: Any, inspector: Inspector, action: Any) -> None:
    with qtbot.waitSignal(inspector.controller.notes_shown, timeout=SIGNAL_TIMEOUT):
        action()
    wait_idle(qtbot, inspector)


def test_filter_by_text_status_scope_and_kind(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    f = inspector.window.filters
    _refreshed(qtbot, inspector, lambda: qtbot.keyClicks(f.search, "lives in grenoble"))
    assert note_texts(inspector) == ["Lives in Grenoble."]
    _refreshed(qtbot, inspector, f.search.clear)
    _refreshed(qtbot, inspector, lambda: _choose(f.status, "All intervals"))
    assert "Lives in Lyon." in note_texts(inspector)
    assert inspector.window.notes_model.rowCount() == 14  # every interval Maya has had in the demo
    _refreshed(qtbot, inspector, lambda: f.scope.setCurrentIndex(f.scope.findText("portable")))
    assert set(_column(inspector, "scope")) == {"portable"}
    _refreshed(qtbot, inspector, lambda: f.kind.setCurrentIndex(f.kind.findText("style")))
    assert sorted(note_texts(inspector)) == ["French", "Warm and brief"]
    assert "4 notes" not in f.count.text() and "2 notes" in f.count.text()


def test_sort_by_clicking_a_header(qtbot: Any, inspector: Inspector, demo_path: Path) -> None:
    unlock(qtbot, inspector, demo_path)
    header = inspector.window.table.horizontalHeader()
    column = [key for key, _ in COLUMNS].index("confidence")
    _refreshed(qtbot, inspector, lambda: header.setSortIndicator(column, ASCENDING))
    values = [int(v.rstrip("%")) for v in _column(inspector, "confidence")]
    assert values == sorted(values) and values[0] < values[-1]
    _refreshed(qtbot, inspector, lambda: header.setSortIndicator(column, DESCENDING))
    values = [int(v.rstrip("%")) for v in _column(inspector, "confidence")]
    assert values == sorted(values, reverse=True)


def test_time_travel_shows_a_deleted_note_as_active_before_its_deletion(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    assert "Has a dentist appointment on Tuesday." not in note_texts(inspector)
    f = inspector.window.filters
    _refreshed(qtbot, inspector, lambda: _choose(f.status, "All intervals"))
    row = note_texts(inspector).index("Has a dentist appointment on Tuesday.")
    deleted = inspector.window.notes_model.note_at(row)
    assert deleted is not None and deleted.status is NoteStatus.DELETED
    assert deleted.valid_to is not None
    before = deleted.valid_to - timedelta(minutes=1)
    _refreshed(qtbot, inspector, lambda: _choose(f.status, "Active"))
    f.moment.setDateTime(QDateTime(before).toTimeZone(QTimeZone.utc()))
    _refreshed(qtbot, inspector, lambda: f.time_travel.setChecked(True))
    assert "Has a dentist appointment on Tuesday." in note_texts(inspector)
    assert "Viewing as of" in inspector.window.time_travel_banner.label.text()
    _refreshed(qtbot, inspector, lambda: f.time_travel.setChecked(False))
    assert "Has a dentist appointment on Tuesday." not in note_texts(inspector)


def test_selecting_a_row_shows_versions_provenance_and_arithmetic(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    row = note_texts(inspector).index("Is vegetarian.")
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT):
        inspector.window.table.selectRow(row)
    detail = inspector.window.detail.browser.toPlainText()
    # F3 in percentages, not basis points (issue 17 item 13)
    assert (
        "85% — 75% to begin with, + 5% for each other conversation that confirmed it (2)" in detail
    )
    assert "Provenance" in detail and "History" in detail


def test_provenance_link_opens_the_conversation_at_the_turn(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    row = note_texts(inspector).index("Lives in Grenoble.")
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT):
        inspector.window.table.selectRow(row)
    source = inspector.controller.notes.detail["sources"][0]  # type: ignore[index]
    with qtbot.waitSignal(inspector.controller.transcript_shown, timeout=SIGNAL_TIMEOUT) as got:
        inspector.window.detail.turn_requested.emit(source["conversation"], source["turn"])
    assert got.args == [source["conversation"]]
    window = inspector.window
    assert window.tabs.currentWidget() is window.conversations
    assert "moved from Lyon to Grenoble" in window.conversations.transcript.toPlainText()
    assert window.conversations.highlight == source["turn"]


def test_timeline_bars_select_notes(qtbot: Any, inspector: Inspector, demo_path: Path) -> None:
    unlock(qtbot, inspector, demo_path)
    timeline = inspector.window.timeline
    show_tab(qtbot, inspector, inspector.window.timeline_tab)
    assert len(timeline._rows) == 14
    index = next(i for i, r in enumerate(timeline._rows) if r.label == "Lives in Lyon.")
    assert timeline._rows[index].note.valid_to is not None  # drawn as a closed interval
    point = timeline.bar_rect(index).center().toPoint()
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT) as got:
        qtbot.mouseClick(timeline, Qt.MouseButton.LeftButton, pos=point)
    assert got.args == [timeline._rows[index].note.id]
    assert "contradicted" in inspector.window.detail.browser.toPlainText()


def test_transcript_shows_tool_calls_and_excision_notices(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    panel = inspector.window.conversations
    show_tab(qtbot, inspector, panel)
    seen = []
    for row in range(panel.list.count()):
        with qtbot.waitSignal(inspector.controller.transcript_shown, timeout=SIGNAL_TIMEOUT):
            panel.list.setCurrentRow(row)
        seen.append(panel.transcript.toPlainText())
    everything = "\n".join(seen)
    assert "places_search returned" in everything and "Boulangerie du Plateau" in everything
    assert "staff:dana removed the result of" in everything
    assert "third party's private phone number" in everything  # the reason is shown
    assert "04 76 00 00 00" not in everything  # the excised content is not
