"""Issue 17 item 13, "Meaning, not ids, the rest of the way": counts read as words ("1
conversation", never "1 conversations" nor "note(s)"), and Export offers the home folder
when there is no ~/Documents (not the working directory)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog, QWidget

from engram.control.audit_sentences import describe
from engram.control.conversations import Cascade, ConversationDeletion
from engram.control.report_document import Counts
from engram.control.report_pages import summary_section
from engram.control.wording import counted
from engram.gui.controllers.conversations import cascade_html
from engram.gui.controllers.person_actions import _learned
from engram.gui.summaries import erasure_summary
from engram.model.events import Event, EventType
from engram.model.ids import CandidateId, ConversationId, NoteId, PersonId, TurnId
from engram.runtime.extraction import PassReport
from tests.gui.conftest import Inspector, Modals, unlock

NOON = datetime(2026, 11, 3, 12, 0, tzinfo=UTC)
WRONG = ("1 conversations", "1 person records", "1 notes", "1 entries", "1 traces", "(s)")


def _clean(text: str) -> None:
    for wrong in WRONG:
        assert wrong not in text


def test_issue17_item13_counted_says_one_thing_and_many_things() -> None:
    assert counted(1, "conversation") == "1 conversation"
    assert counted(2, "conversation") == "2 conversations"
    assert counted(0, "entry", "entries") == "0 entries"
    assert counted(1, "entry", "entries") == "1 entry"


def test_issue17_item13_the_erasure_summary_counts_in_words() -> None:
    text = erasure_summary(
        {
            "person": "maya",
            "erased_at": "2026-11-03T10:00:00Z",
            "actor": "staff:dana",
            "keys_destroyed": ["k1"],
            "rows_deleted": {"persons": 1, "journal": 1, "conversation_log": 1, "notes": 2},
            "raw_file_scan": {"scanned": ["s.engram"], "looked_for": 1, "found": 1},
            "readable_remains": True,
        }
    )
    _clean(text)
    for words in (
        "1 person record",
        "1 journal entry",
        "1 conversation log entry",
        "2 notes",
        "looked for 1 piece of erased ciphertext",
        "1 trace of erased ciphertext is still",
    ):
        assert words in text


def _event(kind: EventType, body: dict[str, Any]) -> Event:
    return Event(PersonId("maya"), 7, NOON, "staff:dana", kind, body)


def test_issue17_item13_audit_sentences_count_in_words() -> None:
    merged = describe(_event(EventType.MERGED, {"merged": ["n1"], "into": "n2"}))
    deleted = describe(
        _event(EventType.CONVERSATION_DELETED, {"conversation": "c1", "closed": ["n1"]})
    )
    used = describe(_event(EventType.ITEM_USED, {"notes": ["n1"], "via": "assembly"}))
    assert merged.startswith("1 note merged into")
    assert deleted.endswith("1 note closed")
    assert used.startswith("1 note used via")


def test_issue17_item13_the_access_report_and_cascade_count_in_words() -> None:
    # The access report's summary page (rewritten for issue 17 item 14) counts in words.
    counts = Counts(
        by_kind={"fact": 1},
        by_scope={"private": 1},
        holding=1,
        closed=0,
        conversations=1,
        disclosures=1,
        removed_parts=1,
        deleted_notes=1,
        deleted_conversations=1,
    )
    page = summary_section("maya", "3 Nov 2026, 12:00 UTC", "you", counts, [], "Checked.")
    summary = " ".join([*page.intro, *(line for b in page.blocks for line in b.lines)])
    _clean(summary)
    for words in (
        "1 note about you is kept: 1 holds now",
        "1 conversation.",
        "1 time in all",
        "1 conversation deleted: its text",
        "1 part of conversations removed",
    ):
        assert words in summary
    preview = ConversationDeletion(ConversationId("c1"), Cascade(PersonId("maya")), 1)
    assert "And 1 note about other participants closes." in cascade_html(preview)


def test_issue17_item13_learning_says_turns_notes_and_candidates_in_words() -> None:
    one = PassReport(
        PersonId("maya"),
        ConversationId("c1"),
        turns=[TurnId("t1")],
        applied=[NoteId("n1")],
        suggested=[CandidateId("k1"), CandidateId("k2")],
    )
    said = _learned([one])
    assert said.startswith("Learned from 1 turn: 1 note written, 2 candidates to review.")
    _clean(said)


def test_issue17_item13_export_opens_in_home_when_documents_is_missing(
    qtbot: Any,
    real_inspector: Inspector,
    demo_path: Path,
    modals: Modals,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No ~/Documents: the export's save dialog opens in the home folder, not wherever the
    inspector was started."""
    home = tmp_path / "home"
    home.mkdir()
    started_in = tmp_path / "somewhere-else"
    started_in.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(started_in)
    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    opened_in: list[str] = []

    def look(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        opened_in.append(dialog.directory().absolutePath())
        dialog.reject()

    modals.expect(look)
    inspector.window.export_action.trigger()
    qtbot.waitUntil(lambda: bool(opened_in), timeout=10_000)
    assert opened_in == [str(home)]
    assert modals.unexpected == []
