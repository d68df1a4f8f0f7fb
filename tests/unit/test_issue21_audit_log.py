"""Issue 21 item 5: the audit workspace's rows, filtered by actor, action, time and note,
searched in their words, paged, linked, and saved as CSV (control.audit_log)."""

from __future__ import annotations

import csv
import stat
from datetime import timedelta
from pathlib import Path

import pytest

from engram.control import audit_log, candidates, notes
from engram.control.audit_log import AuditFilter, AuditPages
from engram.control.forensics import audit_log as whole_log
from engram.control.session import PersonSession
from engram.model.clock import ManualClock
from engram.model.errors import InvalidInput
from engram.model.events import Cause
from engram.model.ids import CandidateId, PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, start_conversation
from engram.runtime.note_writes import NoteDraft, learn_note, suggestion
from engram.store import journal
from engram.store.store import Store

ANA = PersonId("ana")


def _suggest(store: Store, text: str, cause: Cause) -> CandidateId:
    draft = NoteDraft(text, Kind.FACT, Scope.DIRECT)
    candidate, event = suggestion(
        draft, "extractor", "rules", cause, sensitive=False, ambiguous=False
    )
    with store.write() as txn:
        journal.append(store, txn, ANA, [event])
    return candidate


@pytest.fixture
def story(store: Store, clock: ManualClock) -> dict[str, str]:
    """Ana's journal over three days: the agent learns, staff dana edits and decides."""
    info = start_conversation(store, [ANA])
    turn = append_turn(
        store, info.id, role="user", author=ANA, text="I live in Oslo, I love fjords."
    )
    oslo = learn_note(
        store, ANA, NoteDraft("Lives in Oslo", Kind.FACT, Scope.DIRECT), info.id, turn
    )
    fjords = _suggest(store, "Loves fjords", Cause(info.id, turn))
    skiing = _suggest(store, "Skis every winter", Cause(info.id, turn))
    clock.advance(timedelta(days=1))
    dana = PersonSession.open(store, ANA, "staff:dana")
    cat = notes.add_note(dana, "Has a cat named Miso", Kind.FACT, Scope.DIRECT)
    candidates.reject(dana, skiing, 1, "Never said so")
    clock.advance(timedelta(days=1))
    candidates.approve(dana, fjords, 1, apply_now=True)
    notes.delete_note(dana, cat, reason="Asked us to forget the cat")
    return {
        "conversation": info.id,
        "turn": turn,
        "oslo": oslo,
        "cat": cat,
        "fjords": fjords,
        "skiing": skiing,
        "day1": (clock.now() - timedelta(days=2)).date().isoformat(),
        "day2": (clock.now() - timedelta(days=1)).date().isoformat(),
        "day3": clock.now().date().isoformat(),
    }


def _all(session: PersonSession, f: AuditFilter) -> list[dict]:
    pages = AuditPages(session, f)
    pages.finish()
    return pages.page(0, 10_000)


def test_issue21_item5_the_empty_filter_lists_the_whole_journal_as_the_log_does(
    store: Store, story: dict[str, str]
) -> None:
    session = PersonSession.open(store, ANA)
    pages = AuditPages(session, AuditFilter())
    whole = whole_log(session)
    assert pages.complete and pages.total == len(whole)
    listed = pages.page(0, 3) + pages.page(3, 10_000)  # paged by offset
    pages.load_seqs()
    by_seq = pages.page(0, 3) + pages.page(3, 10_000)  # and by seq, once known
    for rows in (listed, by_seq, list(pages.rows())):
        assert [r["seq"] for r in rows] == [r["seq"] for r in whole]
        assert [r["said"] for r in rows] == [r["said"] for r in whole]


def test_issue21_item5_filter_by_actor_action_time_and_note(
    store: Store, story: dict[str, str]
) -> None:
    session = PersonSession.open(store, ANA)
    by_dana = _all(session, AuditFilter(actors=("staff:dana",)))
    assert by_dana and {r["actor"] for r in by_dana} == {"staff:dana"}
    assert len(by_dana) == len([r for r in whole_log(session) if r["actor"] == "staff:dana"])
    deleted = _all(session, AuditFilter(actions=("deleted",)))
    assert [r["type"] for r in deleted] == ["deleted"]
    assert deleted[0]["reason"] == "Asked us to forget the cat"
    day2 = _all(
        session,
        AuditFilter(
            since=audit_log.day_start(story["day2"]), until=audit_log.day_end(story["day2"])
        ),
    )
    assert {r["type"] for r in day2} == {"note_added", "candidate_reviewed"}
    assert all(r["at"].startswith(story["day2"]) for r in day2)
    cat = _all(session, AuditFilter(note=story["cat"]))
    assert [r["type"] for r in cat] == ["note_added", "deleted"]
    both = _all(session, AuditFilter(actors=("staff:dana",), actions=("candidate_reviewed",)))
    assert [r["decision"] for r in both] == ["rejected", "approved"]
    with pytest.raises(InvalidInput, match="not an action"):
        AuditFilter(actions=("nonsense",))
    with pytest.raises(InvalidInput, match="after its end"):
        AuditFilter(
            since=audit_log.day_start(story["day3"]), until=audit_log.day_end(story["day1"])
        )


def test_issue21_item5_search_finds_rows_by_their_words_a_page_at_a_time(
    store: Store, story: dict[str, str]
) -> None:
    session = PersonSession.open(store, ANA)
    pages = AuditPages(session, AuditFilter(words="MISO"))  # the note's words, any case
    assert pages.searching and not pages.complete and pages.total == 0
    first = pages.page(0, 1)
    assert [r["type"] for r in first] == ["note_added"]
    assert "Miso" in first[0]["said"]
    assert pages.finish() == 2 and pages.complete  # its addition and its deletion
    assert [r["type"] for r in pages.page(0, 10)] == ["note_added", "deleted"]
    reason = _all(session, AuditFilter(words="forget the"))  # a reason's words
    assert [r["type"] for r in reason] == ["deleted"]
    by_who = _all(session, AuditFilter(words="dana staff fjords"))  # every word must be there
    assert [r["type"] for r in by_who] == ["candidate_reviewed", "note_added", "candidate_applied"]
    assert _all(session, AuditFilter(words="fjords", actions=("candidate_suggested",)))[0][
        "actor"
    ] == ("extractor")
    assert _all(session, AuditFilter(words="nowhere-to-be-found")) == []


def test_issue21_item5_candidate_rows_say_which_what_was_decided_and_why(
    store: Store, story: dict[str, str]
) -> None:
    session = PersonSession.open(store, ANA)
    [rejected] = _all(
        session, AuditFilter(note=None, words="skis", actions=("candidate_reviewed",))
    )
    assert rejected["said"] == "rejected the suggestion “Skis every winter”"
    assert rejected["reason"] == "Never said so"
    assert (rejected["candidate"], rejected["decision"], rejected["revision"]) == (
        story["skiing"],
        "rejected",
        1,
    )
    assert rejected["links"][0] == {"kind": "candidate", "id": story["skiing"]}


def test_issue21_item5_every_row_links_to_its_note_candidate_conversation_or_turn(
    store: Store, story: dict[str, str]
) -> None:
    session = PersonSession.open(store, ANA)
    rows = _all(session, AuditFilter())
    learned = next(r for r in rows if r["type"] == "note_added" and r["actor"] != "staff:dana")
    assert learned["links"] == [
        {"kind": "note", "id": story["oslo"]},
        {"kind": "turn", "conversation": story["conversation"], "turn": story["turn"]},
    ]
    applied = next(r for r in rows if r["type"] == "candidate_applied")
    assert applied["links"][0] == {"kind": "candidate", "id": story["fjords"]}
    assert applied["links"][1]["kind"] == "note"
    deleted = next(r for r in rows if r["type"] == "deleted")
    assert deleted["links"] == [{"kind": "note", "id": story["cat"]}]


def test_issue21_item5_the_filtered_rows_save_as_csv_recorded_in_the_log(
    store: Store, story: dict[str, str], tmp_path: Path
) -> None:
    dana = PersonSession.open(store, ANA, "staff:dana")
    chosen = AuditFilter(actors=("staff:dana",))
    expected = _all(dana, chosen)
    target = tmp_path / "audit.csv"
    assert audit_log.write_csv(dana, chosen, target) == target
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    with target.open(newline="", encoding="utf-8") as f:
        lines = list(csv.reader(f))
    assert lines[0] == list(audit_log.CSV_COLUMNS)
    assert [int(line[0]) for line in lines[1:]] == [r["seq"] for r in expected]
    assert lines[1][2] == "dana (staff)" and lines[1][3] == "staff:dana"
    deleted = next(line for line in lines if line[6] == "deleted")
    assert deleted[5] == "Asked us to forget the cat" and deleted[9] == story["cat"]
    newest = whole_log(dana)[-1]
    assert (
        newest["type"] == "exported"
        and newest["said"] == "saved audit log entries as CSV to a file"
    )
