"""The export holds what the store holds, count by count (issue 18 item 16).

Before, dropping `candidates`, `profile` or `digest` from the export left every test
passing. Here each section is checked against the journal itself, read without the
export's code: every candidate suggested, every digest line, the profile, every note,
every conversation with each of its turns, and one audit row per journal event.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.control.demo import build_demo
from engram.control.forensics import export_person
from engram.control.notes import all_notes, profile_document
from engram.control.session import PersonSession
from engram.model.event_bodies import CandidateSuggested
from engram.model.events import EventType
from engram.model.ids import PersonId
from engram.runtime.maintenance import maintain_person
from engram.store import conversation_log, crypto, journal
from engram.store.conversation_log import EntryKind
from engram.store.store import Store

MAYA = PersonId("maya")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    path = Path(tmp_path_factory.mktemp("export")) / "demo.engram"
    build_demo(str(path), passphrase="demo", kdf=crypto.FAST_KDF_FOR_TESTS)
    store = Store.open(str(path), passphrase="demo")
    maintain_person(store, MAYA)  # maintenance writes the profile
    yield store
    store.close()


def _journal(store: Store) -> list[Any]:
    with store.read() as conn:
        return list(journal.events(conn, MAYA))


def test_issue18_item16_the_export_holds_every_section_the_store_holds(demo: Store) -> None:
    session = PersonSession(demo, MAYA, MAYA)
    exported = export_person(session)
    events = _journal(demo)

    suggested = {e.body.candidate for e in events if isinstance(e.body, CandidateSuggested)}
    assert suggested, "the demo suggests candidates"
    assert sorted(c["id"] for c in exported["candidates"]) == sorted(suggested)

    digest = [e for e in events if e.type is EventType.DIGEST_LINE_ADDED]
    assert digest, "the demo writes digest lines"
    with demo.read() as conn:
        texts = journal.texts(demo, conn, MAYA, [e.seq for e in digest])
    assert [line["text"] for line in exported["digest"]] == [texts[e.seq] for e in digest]

    profile = profile_document(session)
    assert profile and exported["profile"] == profile

    notes = all_notes(session)
    assert exported["note_count"] == len(notes) == len(exported["notes"])
    assert {n["id"] for n in exported["notes"]} == {v.note.id for v in notes}

    with demo.read() as conn:
        infos = list(conversation_log.for_person(conn, MAYA, limit=10_000))
        turns = {
            info.id: [
                e.ref
                for e in conversation_log.entries(conn, info.id, 0, 100_000)
                if e.kind in (EntryKind.USER, EntryKind.ASSISTANT)
            ]
            for info in infos
        }
    assert {c["id"]: [t["turn"] for t in c["turns"]] for c in exported["conversations"]} == turns
    assert sum(map(len, turns.values())) > 0

    assert len(exported["audit"]) == len(events)
