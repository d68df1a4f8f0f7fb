"""Issue 17 item 8: no single call holds the UI. The access report's PDF travels from the
printing child into the file in pieces, each written and hashed on the job's thread (never
the whole file joined, copied or hashed at once, and never on the UI thread); a page of
notes that arrives is made into the table's items a few rows per turn of the event loop,
so the UI thread never spends a whole page's worth of item calls in one go."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from engram.control import report_printing
from engram.control.private_file import PrivateFile
from engram.control.report_signature import check_report
from engram.gui.notes_model import (
    MAX_PAGES,
    PAGE,
    STORE_ROWS,
    ListSource,
    NotesTableModel,
    Page,
)
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, unlock
from tests.unit.notes_factory import text_note

PIECE = 4096  # the test's chunk: the demo's report is a few of them


def test_issue17_item8_the_report_reaches_its_file_in_pieces_off_the_ui_thread(
    qtbot: Any,
    inspector: Inspector,
    demo_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(report_printing, "CHUNK", PIECE)
    writes: list[tuple[bool, int]] = []  # (on the UI thread, bytes)
    real_write = PrivateFile.write

    def write(self: PrivateFile, data: bytes) -> None:
        writes.append((threading.current_thread() is threading.main_thread(), len(data)))
        real_write(self, data)

    monkeypatch.setattr(PrivateFile, "write", write)
    unlock(qtbot, inspector, demo_path)
    target = tmp_path / "maya-access-report.pdf"
    inspector.prompts.path = str(target)
    saved = inspector.controller.person_actions.report_saved
    with qtbot.waitSignal(saved, timeout=SIGNAL_TIMEOUT * 3):
        inspector.window.report_action.trigger()
    data = target.read_bytes()
    assert len(writes) > 2, "the PDF came as one piece"
    assert not any(on_ui for on_ui, _size in writes), "bytes were written on the UI thread"
    assert max(size for _on_ui, size in writes) <= PIECE
    assert sum(size for _on_ui, size in writes) == len(data)
    store = inspector.controller.hub.store
    assert store is not None
    assert check_report(data, store.info.id, store.info.verify_key).ok


def _notes_page(first: int) -> Page:
    return ListSource([text_note(n).note for n in range(first, first + PAGE)]).first


def test_issue17_item8_an_arriving_page_is_stored_a_few_rows_per_turn_of_the_loop(
    qtbot: Any,
) -> None:
    model = NotesTableModel()
    model.set_source(None, ListSource([text_note(n).note for n in range(3 * PAGE)]))
    asked: list[Any] = []
    model.loader = lambda load, done: asked.append(done)  # the runner's part: the test's
    model.request_rows(PAGE, PAGE + 5)
    [deliver] = asked

    def stored() -> int:
        return sum(model.item(PAGE + r, 0) is not None for r in range(PAGE))

    deliver(_notes_page(PAGE))  # on the UI thread, as the runner delivers it
    assert stored() <= STORE_ROWS < PAGE, "the whole page was made in one call"
    assert model.note_at(PAGE) is None  # not counted as loaded until its last piece
    qtbot.waitUntil(lambda: stored() == PAGE, timeout=SIGNAL_TIMEOUT)
    assert model.note_at(PAGE) is not None


def test_issue17_item8_pages_scrolled_past_let_go_of_their_items(qtbot: Any) -> None:
    """A reset frees every item the table holds in one call: after a minute of scrolling a
    big person that was 2 s. Only the MAX_PAGES stored last keep theirs."""
    pages = MAX_PAGES + 5
    model = NotesTableModel()
    model.set_source(None, ListSource([text_note(n).note for n in range(pages * PAGE)]))
    for number in range(pages):
        model.note_at(number * PAGE)  # no loader: each page loads and stores at once
    holding = [n for n in range(pages) if model.item(n * PAGE, 0) is not None]
    assert len(holding) == MAX_PAGES and holding[-1] == pages - 1
    assert model.note_at(0) is not None  # a page let go of loads again when asked


def test_issue17_item8_a_closed_window_takes_its_idle_filter_with_it(qtbot: Any) -> None:
    """The idle lock watches every event of the application; once its window is gone, its
    filter must go too, or each window ever opened adds a Python call to every event."""
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtWidgets import QApplication, QLineEdit
    from shiboken6 import delete

    from engram.gui.controller import InspectorController
    from engram.gui.idle_lock import IdleLock
    from engram.gui.main_window import MainWindow

    seen: list[int] = []

    class Counting(IdleLock):
        def touch(self) -> None:
            seen.append(1)
            super().touch()

    idle = Counting(minutes=5)
    window = MainWindow()
    InspectorController(window, idle=idle)
    target = QLineEdit()
    qtbot.addWidget(target)
    press = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_A, Qt.KeyboardModifier.NoModifier, "a")
    QApplication.sendEvent(target, press)
    assert seen, "the idle lock did not see a key press while its window was open"
    delete(window)
    seen.clear()
    QApplication.sendEvent(target, press)
    assert not seen, "a closed window's idle lock still filters every event"


def test_issue17_item8_a_saved_report_reloads_the_log_not_the_notes(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    """Saving an access report adds one record to the audit log and changes nothing else:
    the notes table is not loaded again (on 100,000 notes that reload held the window for
    70 ms after every report), while the audit log shows the record."""
    unlock(qtbot, inspector, demo_path)
    window, controller = inspector.window, inspector.controller
    window.tabs.setCurrentIndex(0)  # the notes in view, as the person had them
    inspector.prompts.path = str(tmp_path / "maya-access-report.pdf")
    with (
        qtbot.assertNotEmitted(controller.notes_shown, wait=300),
        qtbot.waitSignal(controller.recorded, timeout=SIGNAL_TIMEOUT * 3),
    ):
        window.report_action.trigger()
    with qtbot.waitSignal(controller.audit_shown, timeout=SIGNAL_TIMEOUT):
        window.tabs.setCurrentWidget(window.audit)
    model = controller.audit_log.view.model
    texts = [
        str(model.index(row, column).data())
        for row in range(model.rowCount())
        for column in range(model.columnCount())
    ]
    assert any("access report" in text for text in texts)
