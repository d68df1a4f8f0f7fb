"""Issue 15, item 11: a clock that once ran ahead.

The clock jumps two years ahead for one write, then comes back. Later events stay in order
(never dated before the journal's newest entry) but are not all frozen at that one future
moment: the journal runs on at the clock's pace (store_time.py), so a transient note still
retires four hours after it was learned (M3) — not two years later — in this process and
in the next. Every write that meets such a clock, verify and time travel warn.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from engram.control.notes import add_note, list_notes
from engram.control.persons import ensure_person
from engram.control.session import PersonSession
from engram.model.clock import ManualClock
from engram.model.ids import PersonId
from engram.model.notes import NoteStatus
from engram.model.scope import Durability, Kind, Scope
from engram.runtime.maintenance import maintain_all
from engram.store import journal
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE, START

ANA = PersonId("ana")
AHEAD = timedelta(days=730)


def _session(store: Store) -> PersonSession:
    return PersonSession(store, ANA, ANA)


def _transient(store: Store, text: str) -> str:
    return add_note(_session(store), text, Kind.FACT, Scope.DIRECT, durability=Durability.TRANSIENT)


def _status(store: Store, note: str) -> NoteStatus:
    views = list_notes(_session(store), include_closed=True)
    return next(v.note.status for v in views if v.note.id == note)


def _ran_ahead_once(store_path: Path, clock: ManualClock) -> Store:
    """A store whose clock ran two years ahead for one write, then came back."""
    store = Store.create(str(store_path), passphrase=PASSPHRASE, clock=clock)
    ensure_person(store, "ana")
    add_note(_session(store), "Plays the cello.", Kind.FACT, Scope.DIRECT)
    clock.set(START + AHEAD)
    add_note(_session(store), "Written while the clock was wrong.", Kind.FACT, Scope.DIRECT)
    clock.set(START + timedelta(minutes=5))  # the clock is right again
    return store


def test_issue15_item11_a_transient_note_still_retires_after_four_hours(
    store_path: Path,
) -> None:
    clock = ManualClock(START)
    store = _ran_ahead_once(store_path, clock)
    try:
        airport = _transient(store, "Is at the airport right now.")
        clock.advance(timedelta(hours=3))
        maintain_all(store)
        assert _status(store, airport) is NoteStatus.ACTIVE  # three hours: not yet
        clock.advance(timedelta(hours=1, minutes=1))
        maintain_all(store)
        assert _status(store, airport) is NoteStatus.RETIRED  # four hours, not two years
        with store.read() as conn:
            stamps = [e.at for e in journal.events(conn, ANA)]
        assert stamps == sorted(stamps)  # order held
        assert stamps[-1] < START + AHEAD + timedelta(hours=5)  # time ran, it did not jump
        assert "journal:ana" in store.clock_behind  # and the store noticed
    finally:
        store.close()


def test_issue15_item11_the_journal_keeps_its_time_across_processes(store_path: Path) -> None:
    clock = ManualClock(START)
    _ran_ahead_once(store_path, clock).close()
    clock.advance(timedelta(hours=1))
    store = Store.open(str(store_path), passphrase=PASSPHRASE, clock=clock)
    airport = _transient(store, "Is at the airport right now.")
    store.close()
    clock.advance(timedelta(hours=4, minutes=1))  # a later command, a new process
    store = Store.open(str(store_path), passphrase=PASSPHRASE, clock=clock)
    try:
        maintain_all(store)
        assert _status(store, airport) is NoteStatus.RETIRED
        report = verify(store)
        assert report.ok, report.problems
        warned = [w for w in report.warnings if "behind the newest entry of ana's journal" in w]
        assert len(warned) == 1 and "check the clock" in warned[0]
    finally:
        store.close()


def test_issue15_item11_a_clock_in_order_changes_nothing(store_path: Path) -> None:
    clock = ManualClock(START, step=timedelta(seconds=1))
    store = Store.create(str(store_path), passphrase=PASSPHRASE, clock=clock)
    try:
        ensure_person(store, "ana")
        before = clock.now()
        add_note(_session(store), "Plays the cello.", Kind.FACT, Scope.DIRECT)
        with store.read() as conn:
            last = list(journal.events(conn, ANA))[-1]
        assert before < last.at <= clock.now()  # dated by the clock itself
        assert "clock_at" not in last.body.to_json() and store.clock_behind == {}
        assert verify(store).warnings == []
    finally:
        store.close()


def test_issue15_item11_the_command_line_warns_on_a_write_and_on_time_travel(
    store_path: Path, cli: Any
) -> None:
    future = ManualClock(datetime.now().astimezone() + AHEAD)  # the real clock is behind it
    store = Store.create(str(store_path), passphrase=PASSPHRASE, clock=future)
    ensure_person(store, "ana")
    add_note(_session(store), "Written while the clock was wrong.", Kind.FACT, Scope.DIRECT)
    store.close()
    added = cli(
        "notes", "add", "--person", "ana", "--text", "Later.", "--kind", "fact",
        "--scope", "direct",
    )  # fmt: skip
    assert added.code == 0 and added.out.strip().startswith("n_")
    warning = added.err.strip()
    assert warning.startswith("warning: this computer's clock") and warning.count("\n") == 0
    assert "behind the newest entry of ana's journal" in warning
    travelled = cli("notes", "list", "--person", "ana", "--as-of", "2026-01-01T00:00:00Z")
    assert travelled.code == 0 and "ana's journal" in travelled.err
    checked = cli("verify")
    assert checked.code == 0 and "warning: this computer's clock" in checked.out
