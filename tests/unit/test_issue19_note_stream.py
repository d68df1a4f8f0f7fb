"""Issue 19 item 2: `notes list` streams a person's notes a page at a time, and what it
lists is exactly what the whole listing was (same notes, same order, same texts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram.control import notes
from engram.control.note_stream import stream_notes
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.store.store import Store

ANA = PersonId("ana")


def _person(store: Store) -> PersonSession:
    session = PersonSession(store, ANA, ANA)
    made = [
        notes.add_note(session, f"Note {i}.", Kind.FACT, Scope.DIRECT, create_person=i == 0)
        for i in range(11)
    ]
    notes.delete_note(session, made[2])
    notes.edit_note(session, made[5], text="Note five, corrected.")
    return session


@pytest.mark.parametrize("include_closed", [False, True])
def test_issue19_item2_pages_list_what_the_whole_listing_lists(
    store: Store, include_closed: bool
) -> None:
    session = _person(store)
    whole = notes.list_notes(session, include_closed=include_closed)
    paged = list(stream_notes(session, include_closed=include_closed, page=3))
    assert [v.to_json() for v in paged] == [v.to_json() for v in whole]
    assert len(whole) == (12 if include_closed else 10)  # 11 notes and one new version


def test_issue19_item2_cli_json_is_the_same_document(
    store: Store, store_path: Path, cli: Any
) -> None:
    session = _person(store)
    expected = [v.to_json() for v in notes.list_notes(session, include_closed=True)]
    store.close()
    listed = cli("notes", "list", "--person", "ana", "--all", "--json")
    assert listed.code == 0
    assert listed.out == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"
