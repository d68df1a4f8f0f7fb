"""Issue 17 item 13, "Meaning, not ids, the rest of the way": counts read as words ("1
conversation", never "1 conversations" nor "note(s)"), and Export offers the home folder
when there is no ~/Documents (not the working directory)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog, QLabel, QWidget

from engram.control import candidates as candidate_control
from engram.control import conversations as conversation_control
from engram.control import forensics, turn_block
from engram.control import notes as memory_control
from engram.control.audit_sentences import describe
from engram.control.conversations import Cascade, ConversationDeletion
from engram.control.erasure_report import ErasureReport, FileScan, PageRewrite
from engram.control.report_document import Counts
from engram.control.report_pages import summary_section
from engram.control.session import PersonSession
from engram.control.wording import counted
from engram.gui.audience_panel import AudiencePanel
from engram.gui.audit_log_view import AuditModel
from engram.gui.controllers.conversations import cascade_html
from engram.gui.controllers.person_actions import _learned
from engram.gui.detail_panel import render_detail
from engram.gui.summaries import erasure_summary
from engram.gui.turn_sight_dialog import turn_sight_html
from engram.model.conversation import EntryKind
from engram.model.errors import EngramError
from engram.model.event_bodies import decode_body
from engram.model.events import Event, EventType
from engram.model.ids import CandidateId, ConversationId, NoteId, PersonId, TurnId
from engram.runtime.conversations import conversations_of, turns
from engram.runtime.extraction import PassReport
from engram.store.store import Store
from tests.conftest import PASSPHRASE
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
        ErasureReport(
            person="maya",
            erased_at="2026-11-03T10:00:00Z",
            actor="staff:dana",
            erasure_record=1,
            keys_destroyed=("k1",),
            rows_deleted={"persons": 1, "journal": 1, "conversation_log": 1, "notes": 2},
            conversations_deleted=0,
            turns_excised=0,
            pseudonymized_rows=0,
            clear_id_rows={},
            wal_checkpoint="complete",
            page_rewrite=PageRewrite("complete", 9, 8),
            frames=0,
            checkpointed=0,
            asked_others_to_let_go=False,
            raw_file_scan=FileScan(("s.engram",), looked_for=1, found=1),
        )
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
    return Event(PersonId("maya"), 7, NOON, "staff:dana", kind, decode_body(kind, body))


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


# ---- item 13: meaning, not ids, in every message the window shows ----------------------

IDS = re.compile(r"\b[Nncms]_[0-9a-f]{6,}|\bledger event \d+|\bundid event \d+")
JARGON = (
    "basis points",
    "extractor",
    "runtime",
    "memory_recall",
    "candidate reviewed",
    "candidate suggested",
    "candidate applied",
    "extraction checkpoint",
    "via assembly",
    "via recall",
)


def _shown(html_text: str) -> str:
    """What a person reads of rich text: tooltips (title=…) and link targets dropped."""
    text = re.sub(r"""\s(title|href)=(['"]).*?\2""", "", html_text)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def _meaningful(text: str, where: str) -> None:
    assert not IDS.search(text), f"{where} shows an id: {IDS.search(text)!r} in {text!r}"
    for word in JARGON:
        assert word not in text.lower(), f"{where} says {word!r}: {text!r}"


@pytest.fixture
def demo_store(demo_path: Path) -> Iterator[Store]:
    store = Store.open(str(demo_path), passphrase=PASSPHRASE)
    yield store
    store.close()


def test_issue17_item13_the_audit_log_names_candidates_decisions_and_actors_in_words(
    qtbot: Any, demo_store: Store
) -> None:
    model = AuditModel()
    said: list[str] = []
    for person in ("maya", "sam", "ines"):
        model.set_rows(forensics.audit_log(PersonSession.open(demo_store, person, "staff:t")))
        for row in range(model.rowCount()):
            for column in range(model.columnCount()):
                cell = str(model.index(row, column).data() or "")
                _meaningful(cell, f"the audit log of {person}, row {row + 1}")
                said.append(cell)
    assert "the agent's memory engine" in said  # the actor "extractor", in words
    assert (
        "rejected the suggestion “Dislikes crowded gyms.” — “A passing remark, not worth keeping.”"
        in said
    )
    assert "approved the suggestion “Works at the Grenoble botanical garden.”" in said
    assert "suggested remembering “Likes bouldering.”" in said


def test_issue17_item13_the_cascade_preview_names_notes_and_conversations_in_words(
    demo_store: Store,
) -> None:
    seen = []
    for person in ("maya", "sam", "ines"):
        session = PersonSession.open(demo_store, person, "staff:t")
        for info in conversations_of(demo_store, person):
            preview = conversation_control.preview_delete(session, info.id)
            page = _shown(cascade_html(preview))
            _meaningful(page, f"the cascade preview of {person}'s {info.id}")
            seen.append(page)
    pages = "\n".join(seen)
    assert "“Works at the Grenoble botanical garden.”, which contradicted it" in pages
    assert "text comes from the conversation of" in pages and " with maya" in pages
    assert "Deleting the conversation of " in pages


def test_issue17_item13_conflicts_and_refused_edits_name_what_they_refuse(
    demo_store: Store,
) -> None:
    session = PersonSession.open(demo_store, "maya", "staff:t")
    pending = candidate_control.list_candidates(session, "pending")[0]
    decided = candidate_control.list_candidates(session, "rejected")[0]
    messages = []
    for attempt in (
        lambda: candidate_control.approve(session, pending["id"], pending["revision"] + 1),
        lambda: candidate_control.reject(session, decided["id"], decided["revision"], "x"),
        lambda: candidate_control.apply(session, pending["id"]),
    ):
        with pytest.raises(EngramError) as refused:
            attempt()
        messages.append(str(refused.value))
    closed = next(v for v in memory_control.all_notes(session) if not v.note.is_active)
    with pytest.raises(EngramError) as refused:
        memory_control.edit_note(session, closed.note.id, text="new words")
    messages.append(str(refused.value))
    for message in messages:
        _meaningful(message, "a refusal")
    assert f"“{pending['text'][:20]}" in messages[0] and "someone else decided first" in messages[0]
    assert messages[1].startswith(f"The suggestion “{decided['text']}” is already rejected")
    assert messages[3].startswith(f"The note “{closed.text}” is already closed")


def test_issue17_item13_note_details_and_what_the_agent_saw_speak_plainly(
    qtbot: Any, demo_store: Store
) -> None:
    session = PersonSession.open(demo_store, "maya", "staff:t")
    for view in memory_control.all_notes(session):
        page = _shown(render_detail(memory_control.show_note(session, view.note.id)))
        _meaningful(page, f"the detail of “{view.text}”")
        assert "%" in page.split("Confidence", 1)[1].split(";", 1)[0]
    for info in conversations_of(demo_store, "maya"):
        for entry, _text in turns(demo_store, info.id):
            if entry.kind is EntryKind.ASSISTANT and entry.ref is not None:
                sight = turn_block.turn_sight(session, info.id, TurnId(entry.ref))
                _meaningful(_shown(turn_sight_html(sight)), "what the agent saw")
    panel = AudiencePanel()
    qtbot.addWidget(panel)
    for label in panel.findChildren(QLabel):
        _meaningful(label.text(), "the audience panel")
    _meaningful(panel.recall.accessibleName(), "the audience panel")
