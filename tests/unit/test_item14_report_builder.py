"""Issue 17 item 14: the access report's content, built Qt-free in control/ (a typed
ReportDocument): per note its disclosures (usage ledger) and history, each conversation's
transcript with removed parts marked, actors in words, local times with their zone, no ids
on the first page, a summary page with counts, and a page on correction and erasure."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from engram.control import notes as memory_control
from engram.control import undo as undo_control
from engram.control.access_report import ReportCancelled, build_report
from engram.control.demo import MAYA, build_demo
from engram.control.report_document import Block, ReportDocument
from engram.control.session import PersonSession
from engram.store import crypto
from engram.store.store import Store
from tests.conftest import PASSPHRASE

PARIS = ZoneInfo("Europe/Paris")
BEGIN = datetime(2026, 10, 20, 19, 30, 11, tzinfo=UTC)  # the demo's dates, fixed
ID = re.compile(r"\b[nctsk]_[0-9a-f]{6,}|staff:|~[0-9a-f]{8,}")


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "demo.engram"
    build_demo(str(path), passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS, start=BEGIN)
    return path


@pytest.fixture
def session(demo_file: Path) -> Iterator[PersonSession]:
    store = Store.open(str(demo_file), passphrase=PASSPHRASE)
    try:
        yield PersonSession(store, MAYA, "staff:test")
    finally:
        store.close()


@pytest.fixture
def report(session: PersonSession) -> ReportDocument:
    return build_report(session, PARIS)


def _note(report: ReportDocument, text: str) -> Block:
    [block] = [b for b in report.section("notes").blocks if b.heading.endswith(f": {text}")]
    return block


def _text(block: Block) -> str:
    return "\n".join([block.heading, *(f"{k}: {v}" for k, v in block.facts), *block.lines])


def test_item14_each_note_lists_every_disclosure_with_agent_and_readers(
    report: ReportDocument,
) -> None:
    french = _text(_note(report, "French"))
    assert "Disclosed 3 times:" in french
    # The shared conversation with sam: the agent, the turn and who could read the answer.
    assert (
        "given to the agent 'helper' as background for its answer, in message 2 of "
        "conversation 3" in french
    )
    assert "who could read the answer: you and sam" in french
    assert "when it asked to recall what it knows about you" in french
    assert "who could read the answer: you alone" in french
    never = _text(_note(report, "Lives in Lyon."))
    assert "Never disclosed" in never


def test_item14_each_note_has_kind_scope_in_words_validity_and_history(
    report: ReportDocument,
) -> None:
    lyon = dict(_note(report, "Lives in Lyon.").facts)
    assert lyon["Kind"] == "fact"
    assert lyon["Scope"] == "private: used only when you alone can read the answer"
    assert lyon["Valid"].startswith("from 20 Oct 2026, ") and "CEST to 3 Nov 2026" in lyon["Valid"]
    assert lyon["Valid"].endswith(" CET")  # local times, each with its own zone
    institute = _text(_note(report, "Works at the botanical institute."))
    assert "support staff dana: note 2 “Works at the botanical institute.” made portable" in (
        institute
    )  # a scope change, by whom, in words
    dentist = _text(_note(report, "Has a dentist appointment on Tuesday."))
    assert "you: deleted note 7" in dentist and "“The appointment is over.”" in dentist
    assert "Engram's automatic learning: added open thread note 7" in dentist


def test_item14_an_undone_deletion_shows_in_the_notes_history(session: PersonSession) -> None:
    allergy = next(
        v for v in memory_control.all_notes(session) if v.text == "Allergic to penicillin."
    )
    since = undo_control.session_start(session)
    memory_control.delete_note(session, allergy.note.id, "by mistake")
    change = undo_control.last_change(session, since)
    assert change is not None
    undo_control.undo(session, change.seq, since)
    history = _text(_note(build_report(session, PARIS), "Allergic to penicillin."))
    assert "support staff test: deleted note 13" in history
    assert "support staff test: undid" in history and "(a deletion)" in history


def test_item14_transcripts_are_kept_whole_and_removed_parts_marked(
    report: ReportDocument,
) -> None:
    conversations = report.section("conversations").blocks
    said = [b.lines[0] for b in conversations if b.tone == "turn"]
    assert "Bonjour! I just moved to Lyon for a new job at the botanical institute." in said
    assert "Maya, are you leading the community garden project this spring?" in said  # sam's
    [removed] = [b for b in conversations if b.tone == "removed"]
    assert removed.heading.endswith("what the tool 'contacts_lookup' answered")
    assert removed.lines[0].startswith("[Removed on 3 Nov 2026, 22:51 CET by support staff dana")
    assert "“The result held a third party's private phone number”" in removed.lines[0]
    assert report.counts.removed_parts == 1


def test_item14_the_first_page_names_no_id_and_actors_in_words(report: ReportDocument) -> None:
    first = report.sections[0]
    assert first.key == "summary" and not first.new_page
    page = "\n".join([first.title, *first.intro, *(_text(b) for b in first.blocks)])
    assert ID.search(page) is None, ID.search(page)
    assert "by support staff test" in page
    assert "The agent 'helper' was given 9 notes." in page
    assert "sam could read answers that used 2 of your notes." in page
    # Ids are in the appendix only, for staff.
    assert report.store_id in report.section("appendix").blocks[0].facts[0][1]
    everything_else = "\n".join(
        _text(b) for s in report.sections if s.key != "appendix" for b in s.blocks
    )
    assert ID.search(everything_else) is None


def test_item14_the_summary_counts_notes_by_kind_and_scope(report: ReportDocument) -> None:
    views = [b for b in report.section("notes").blocks]
    kinds = [dict(b.facts)["Kind"].split(" (")[0] for b in views]
    assert report.counts.by_kind == {k: kinds.count(k) for k in sorted(set(kinds))}
    assert report.counts.by_kind == {"fact": 8, "open thread": 2, "preference": 2, "style": 2}
    assert report.counts.by_scope == {"private": 10, "shared": 4}
    assert (report.counts.holding, report.counts.closed, report.counts.deleted_notes) == (9, 5, 1)
    blocks = {b.heading: b for b in report.sections[0].blocks}
    assert dict(blocks["By kind"].facts) == {
        "fact": "8",
        "open thread": "2",
        "preference": "2",
        "style": "2",
    }
    assert dict(blocks["By scope"].facts) == {"private": "10", "shared": "4"}
    assert "1 note deleted" in _text(blocks["What was erased"])


def test_item14_page_two_says_how_to_ask_for_a_correction_or_an_erasure(
    report: ReportDocument,
) -> None:
    rights = report.sections[1]
    assert rights.key == "rights" and rights.new_page
    assert rights.title == "How to ask for a correction or an erasure"
    text = "\n".join(_text(b) for b in rights.blocks)
    assert "which note is wrong" in text and "“note 4”" in text
    assert "everything about you to be erased" in text
    assert "engram verify-report FILE" in text
    assert ID.search(text) is None


def test_item14_a_cancel_stops_the_build(session: PersonSession) -> None:
    with pytest.raises(ReportCancelled):
        build_report(session, PARIS, None, lambda: True)
