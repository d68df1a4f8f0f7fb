"""Issue 19 item 1: verify reads each stored row as a plain named tuple and compares a
stored note row with the replayed note's values as one tuple, in the table's column order;
an indexed cell edited outside Engram is still a difference."""

from __future__ import annotations

import sqlite3

from engram.control import notes
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.store import schema
from engram.store.projection_rows import NOTE_COLUMNS
from engram.store.store import Store
from engram.store.verify import verify


def test_issue19_item1_the_replay_check_compares_notes_in_the_tables_column_order() -> None:
    assert tuple(c.name for c in schema.note_state.columns) == NOTE_COLUMNS


def test_issue19_item1_an_indexed_cell_edited_outside_is_still_found(store: Store) -> None:
    session = PersonSession(store, PersonId("ana"), PersonId("ana"))
    notes.add_note(session, "Plays the cello.", Kind.FACT, Scope.DIRECT, create_person=True)
    assert verify(store).ok
    path = store.engine.url.database
    assert path
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE note_state SET confidence_bp = confidence_bp - 1")
    report = verify(store)
    assert not report.ok
    assert any("differ from a replay" in p for p in report.problems)
