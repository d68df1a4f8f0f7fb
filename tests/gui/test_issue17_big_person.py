"""Issue 17 item 9: big people stay quick — on a person with thousands of notes, a typed
search and switching "As of" on list the same rows as the naive filters did, and the engine
does the filtering: a search decrypts about a page of texts, not every note, and time
travel folds at most one snapshot's spacing of events, not the whole journal."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QDateTime, QTimeZone

from engram.engine import fold, fold_timeline
from engram.gui.notes_model import PAGE
from engram.model.clock import ManualClock
from engram.model.event_bodies import Deleted, NoteAdded
from engram.model.events import EventType, NewEvent
from engram.model.ids import NoteId, PersonId
from engram.model.notes import NoteFilter
from engram.model.scope import Kind, Scope
from engram.runtime.note_writes import NoteDraft, note_added
from engram.store import crypto, journal
from engram.store.store import Store
from tests.conftest import PASSPHRASE, START
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, unlock, wait_idle
from tests.unit.test_big_person_filters import naive_search, naive_then

pytestmark = pytest.mark.slow  # builds a 5,000-note person (a few seconds)

PAT = PersonId("pat")
NOTES = 5_000
BATCH = 500


def _build(path: Path) -> list[datetime]:
    """Pat, with 5,000 notes written an hour apart per batch, some deleted or rescoped
    later; returns the time after each batch."""
    clock = ManualClock(START, step=timedelta(milliseconds=1))
    store = Store.create(str(path), passphrase=PASSPHRASE, clock=clock)
    times = []
    with store.write() as txn:
        journal.ensure_person(store, txn, PAT)
    made: list[NoteId] = []
    for start in range(0, NOTES, BATCH):
        events = []
        for i in range(start, start + BATCH):
            draft = NoteDraft(
                f"Note {i}: prefers item {i} over the others",
                list(Kind)[i % 4],
                list(Scope)[i % 3],
                confidence_bp=i * 37 % 10_000,
            )
            events.append(note_added(draft, "bench", None, None))
        for old in made[start // 3 : start // 3 + 40 : 2]:  # earlier notes close later
            events.append(NewEvent(EventType.DELETED, "staff:test", Deleted(old)))
        with store.write() as txn:
            journal.append(store, txn, PAT, events)
        made += [e.body.note for e in events if isinstance(e.body, NoteAdded)]
        times.append(clock.now())
        clock.advance(timedelta(hours=1))
    store.close()
    return times


@pytest.fixture(scope="module")
def big_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[datetime]]:
    path = tmp_path_factory.mktemp("big") / "big.engram"
    return path, _build(path)


class Counting:
    """Wraps a real function and counts its calls (the function still runs)."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real, self.calls = real, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.real(*args, **kwargs)


def _rows(qtbot: Any, inspector: Inspector, rows: range | None = None) -> list[tuple[str, str]]:
    """The note id and status of some rows (all by default), loading their pages the way
    scrolling does."""
    model = inspector.window.notes_model
    wanted = list(rows if rows is not None else range(model.rowCount()))
    for row in wanted:
        model.request_rows(row, row)
    qtbot.waitUntil(
        lambda: all(model.note_at(r) is not None for r in wanted), timeout=SIGNAL_TIMEOUT
    )
    notes = [model.note_at(r) for r in wanted]
    return [(n.id, n.status.value) for n in notes if n is not None]


def test_item9_typed_search_and_time_travel_list_what_the_naive_filters_did(
    qtbot: Any,
    inspector: Inspector,
    big_template: tuple[Path, list[datetime]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    template, times = big_template
    path = tmp_path / "big.engram"
    path.write_bytes(template.read_bytes())
    checkpoint = template.with_name(template.name + ".checkpoint")
    path.with_name(path.name + ".checkpoint").write_bytes(checkpoint.read_bytes())
    unlock(qtbot, inspector, path, person="pat")
    wait_idle(qtbot, inspector)  # the listing, and the engine's warm-up behind it
    session = inspector.controller.session
    assert session is not None
    f = inspector.window.filters
    opened = Counting(crypto.unseal)
    monkeypatch.setattr(crypto, "unseal", opened)

    # Typed back to back: one search runs after the last key (the debounce).
    with qtbot.waitSignal(inspector.controller.notes_shown, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClicks(f.search, "ITEM 12")
    wait_idle(qtbot, inspector)
    assert opened.calls <= 2 * PAGE, f"a search decrypted {opened.calls} texts"
    searched = _rows(qtbot, inspector)
    monkeypatch.setattr(crypto, "unseal", opened.real)
    expected = naive_search(session, NoteFilter(), "ITEM 12")
    assert searched == [(n.id, n.status.value) for n in expected]
    assert f.count.text() == f"{len(searched)} notes"  # the rest found after the first page
    assert 100 < len(searched) <= 111  # item 12, 120-129, 1200-1299: those still active

    with qtbot.waitSignal(inspector.controller.notes_shown, timeout=SIGNAL_TIMEOUT):
        f.search.clear()
    wait_idle(qtbot, inspector)
    folded = Counting(fold.apply_event)
    monkeypatch.setattr(fold, "apply_event", folded)
    monkeypatch.setattr(fold_timeline, "apply_event", folded)
    for moment in (None, times[4] + timedelta(minutes=30)):  # now, then half way
        folded.calls = 0
        if moment is not None:
            with qtbot.waitSignal(inspector.controller.notes_shown, timeout=SIGNAL_TIMEOUT):
                f.moment.setDateTime(QDateTime(moment).toTimeZone(QTimeZone.utc()))
        else:
            with qtbot.waitSignal(inspector.controller.notes_shown, timeout=SIGNAL_TIMEOUT):
                f.time_travel.setChecked(True)
        wait_idle(qtbot, inspector)
        assert folded.calls <= fold_timeline.MIN_SPACING, f"time travel folded {folded.calls}"
        then = inspector.controller.notes.moment()
        assert then is not None
        total = inspector.window.notes_model.rowCount()
        seen = [*range(2 * PAGE), *range(total - PAGE, total)]  # the top and the bottom
        expected_then = naive_then(session, then, NoteFilter(), "")
        assert total == len(expected_then)
        assert _rows(qtbot, inspector, seen) == [
            (n.id, n.status.value) for n in (expected_then[r] for r in seen)
        ]
    assert 2_000 < total < 3_000  # half the notes existed then, some since deleted
