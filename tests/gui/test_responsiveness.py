"""The UI thread stays free while a person is opened again, a filter changes or pages load
(issue 8, Evidence: "the longest UI-thread block is at most 50 ms on every sample";
tests/perf/bench_inspector.py measures it). What these tests hold is the behaviour behind
the figures: no page loads nobody sees, no Python call per painted cell, no repaint of
every tab for a label that did not change."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from engram.gui import theme
from engram.gui.notes_model import PAGE, SCOPE_COLUMN, Page
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.note_writes import NoteDraft, note_added
from engram.store import crypto, journal
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, unlock, wait_idle

PERSON = PersonId("pat")
NOTES = PAGE * 6  # six pages


@pytest.fixture(scope="module")
def big_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One person with six pages of notes, of every scope."""
    path = tmp_path_factory.mktemp("big") / "big.engram"
    store = Store.create(
        str(path), passphrase=PASSPHRASE, use_keyring=False, kdf=crypto.FAST_KDF_FOR_TESTS
    )
    scopes = list(Scope)
    events = [
        note_added(NoteDraft(f"note {i}", Kind.FACT, scopes[i % 3]), "test", None, None)
        for i in range(NOTES)
    ]
    with store.write() as txn:
        journal.ensure_person(store, txn, PERSON)
        journal.append(store, txn, PERSON, events)
    store.close()
    return path


@pytest.fixture
def big_path(big_template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "big.engram"
    target.write_bytes(big_template.read_bytes())
    checkpoint = big_template.with_name(big_template.name + ".checkpoint")
    if checkpoint.exists():
        target.with_name(target.name + ".checkpoint").write_bytes(checkpoint.read_bytes())
    return target


def _recording_loads(inspector: Inspector) -> list[int]:
    """Counts every page the table asks the worker for, from now on."""
    model = inspector.window.notes_model
    loader = model.loader
    assert loader is not None
    asked: list[int] = []

    def recording(load: Callable[[], Page], done: Callable[[Page], None]) -> None:
        asked.append(len(asked))
        loader(load, done)

    model.loader = recording
    return asked


def _scroll_to_bottom(qtbot: Any, inspector: Inspector) -> None:
    table, model = inspector.window.table, inspector.window.notes_model
    table.scrollToBottom()
    qtbot.waitUntil(lambda: model.note_at(model.rowCount() - 1) is not None)
    wait_idle(qtbot, inspector)


def test_issue8_evidence_a_new_listing_loads_no_page_under_the_old_scroll_position(
    qtbot: Any, inspector: Inspector, big_path: Path
) -> None:
    """After scrolling to the bottom, opening the person again or changing a filter starts
    the new list at its top, whose page comes with the listing: nothing else is read (the
    old code first read the pages under the old scroll position, beside the repaint)."""
    unlock(qtbot, inspector, big_path, person=str(PERSON))
    model = inspector.window.notes_model
    assert model.rowCount() == NOTES
    changes: list[Callable[[], None]] = [
        lambda: inspector.controller.open_person(str(PERSON)),
        lambda: inspector.window.filters.status.setCurrentIndex(1),  # all intervals
    ]
    for change in changes:
        _scroll_to_bottom(qtbot, inspector)
        asked = _recording_loads(inspector)
        with qtbot.waitSignal(inspector.controller.notes_shown, timeout=SIGNAL_TIMEOUT):
            change()
        wait_idle(qtbot, inspector)
        assert asked == []
        assert inspector.window.table.verticalScrollBar().value() == 0
        assert model.note_at(0) is not None


def _first_badge(model: Any) -> str:
    return _badge_colour(model.index(0, SCOPE_COLUMN).data(Qt.ItemDataRole.DecorationRole))


def _badge_colour(icon: QIcon, mode: QIcon.Mode = QIcon.Mode.Normal) -> str:
    image = icon.pixmap(icon.availableSizes()[0], mode).toImage()
    return image.pixelColor(4, image.height() // 2).name()


def test_issue8_evidence_scope_badges_are_pictures_that_follow_the_palette(
    qtbot: Any, inspector: Inspector, big_path: Path
) -> None:
    """The scope cell holds its badge as an icon (painted in C++, no Python delegate
    called per cell), reads its scope aloud, explains it in a tooltip, stays untinted on
    the selected row, and the loaded rows follow a change of palette."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    unlock(qtbot, inspector, big_path, person=str(PERSON))
    table, model = inspector.window.table, inspector.window.notes_model
    assert table.itemDelegateForColumn(SCOPE_COLUMN) is None
    before = app.palette()
    try:
        for dark in (False, True):
            app.setPalette(theme.dark_palette() if dark else theme.light_palette(app))
            first = model.note_at(0)
            assert first is not None
            wanted = theme.scope_color(first.scope, dark).name()
            # The window hears of the new palette from the event loop.
            qtbot.waitUntil(lambda colour=wanted: _first_badge(model) == colour)
            for row in range(3):
                cell = model.index(row, SCOPE_COLUMN)
                note = model.note_at(row)
                assert note is not None
                assert cell.data(Qt.ItemDataRole.AccessibleTextRole) == note.scope.value
                assert note.scope.value in cell.data(Qt.ItemDataRole.ToolTipRole)
                assert not cell.data(Qt.ItemDataRole.DisplayRole)
                badge = cell.data(Qt.ItemDataRole.DecorationRole)
                assert isinstance(badge, QIcon) and not badge.isNull()
                colour = theme.scope_color(note.scope, dark).name()
                assert _badge_colour(badge) == colour
                # A selected row shows the same badge, not one tinted by the selection.
                assert _badge_colour(badge, QIcon.Mode.Selected) == colour
                size = badge.availableSizes()[0]
                assert table.iconSize().width() >= size.width()  # shown whole, not shrunk
                assert table.columnWidth(SCOPE_COLUMN) >= size.width() + 8  # and not cut off
    finally:
        app.setPalette(before)


class _Paints(QObject):
    """Counts paint events of one widget."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


@pytest.fixture
def tab_paints(inspector: Inspector) -> Iterator[_Paints]:
    paints = _Paints()
    inspector.window.tabs.installEventFilter(paints)
    yield paints
    inspector.window.tabs.removeEventFilter(paints)


def test_issue8_evidence_opening_the_person_again_repaints_the_table_not_every_tab(
    qtbot: Any, inspector: Inspector, big_path: Path, tab_paints: _Paints
) -> None:
    """Opening the person on screen again reloads the rows, but the tab labels did not
    change, so the tabs are not laid out and repainted (setting the candidates' label to
    the text it had repainted every tab, twice, on each change of person)."""
    unlock(qtbot, inspector, big_path, person=str(PERSON))
    qtbot.wait(100)
    tab_paints.count = 0
    with qtbot.waitSignal(inspector.controller.notes_shown, timeout=SIGNAL_TIMEOUT):
        inspector.controller.open_person(str(PERSON))
    wait_idle(qtbot, inspector)
    qtbot.wait(100)
    assert tab_paints.count == 0
