"""Issue 21 item 5: the audit workspace in the window — filters, a search typed key after
key, rows that lead to what they are about, and the listed rows saved as CSV."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from engram.control.audit_log import AuditFilter, AuditPages
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, select_note, show_tab, unlock, wait_idle

AN_ID = re.compile(r"\b[nctp]_[0-9a-f]{6,}\b")


def _rows(inspector: Inspector) -> list[list[str]]:
    model = inspector.window.audit.model
    return [
        [str(model.index(r, c).data()) for c in range(model.columnCount())]
        for r in range(model.rowCount())
    ]


def _journal(inspector: Inspector, f: AuditFilter) -> list[dict[str, Any]]:
    session = inspector.controller.session
    assert session is not None
    return list(AuditPages(session, f).rows())


def _choose(qtbot: Any, inspector: Inspector, box: Any, value: Any) -> None:
    with qtbot.waitSignal(inspector.controller.audit_shown, timeout=SIGNAL_TIMEOUT):
        box.setCurrentIndex(box.findData(value))
    wait_idle(qtbot, inspector)


def test_issue21_item5_filters_by_actor_and_action_list_what_the_journal_holds(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    show_tab(qtbot, inspector, inspector.window.audit)
    log = inspector.window.audit.log
    whole = _journal(inspector, AuditFilter())
    assert log.model.rowCount() == len(whole)
    assert log.span.text() == f"All {len(whole)} journal entries, the newest last."
    assert "staff:dana" in [log.actor.itemData(i) for i in range(log.actor.count())]
    assert "dana (staff)" in [log.actor.itemText(i) for i in range(log.actor.count())]
    _choose(qtbot, inspector, log.actor, "staff:dana")
    danas = _journal(inspector, AuditFilter(actors=("staff:dana",)))
    assert danas and log.model.rowCount() == len(danas)
    assert {row[1] for row in _rows(inspector)} == {"dana (staff)"}
    _choose(qtbot, inspector, log.actor, None)
    _choose(qtbot, inspector, log.action, "candidate_reviewed")
    decided = _rows(inspector)
    assert len(decided) == 2
    rejected = next(row for row in decided if row[2].startswith("rejected the suggestion"))
    assert "“" in rejected[2] and " — “" in rejected[2]  # which suggestion, and why
    assert not [cell for row in _rows(inspector) for cell in row if AN_ID.search(cell)]


def test_issue21_item5_typing_a_search_key_after_key_lists_once_and_finds_the_words(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    show_tab(qtbot, inspector, inspector.window.audit)
    log = inspector.window.audit.log
    listings: list[int] = []
    inspector.controller.audit_shown.connect(lambda: listings.append(log.model.rowCount()))
    log.search.setFocus()
    with qtbot.waitSignal(inspector.controller.audit_shown, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClicks(log.search, "grenoble")  # back to back, no pause between keys
    wait_idle(qtbot, inspector)
    expected = _journal(inspector, AuditFilter(words="grenoble"))
    assert expected and len(listings) == 1  # one listing once the typing paused
    assert log.model.rowCount() == len(expected)
    assert all("grenoble" in row[2].lower() for row in _rows(inspector))
    assert log.span.text() == f"{len(expected)} journal entries hold those words."
    with qtbot.waitSignal(inspector.controller.audit_shown, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClicks(log.search, "zzz")
        qtbot.keyClick(log.search, Qt.Key.Key_Return)  # Return searches at once
    wait_idle(qtbot, inspector)
    assert log.model.rowCount() == 0


def test_issue21_item5_dates_narrow_and_a_wrong_date_is_said_plainly(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    show_tab(qtbot, inspector, inspector.window.audit)
    log = inspector.window.audit.log
    whole = _journal(inspector, AuditFilter())
    last_day = whole[-1]["at"][:10]
    log.since.setFocus()
    qtbot.keyClicks(log.since, last_day)
    with qtbot.waitSignal(inspector.controller.audit_shown, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(log.since, Qt.Key.Key_Return)
    wait_idle(qtbot, inspector)
    that_day = [r for r in whole if r["at"][:10] >= last_day]
    assert log.model.rowCount() == len(that_day)
    log.until.setFocus()
    qtbot.keyClicks(log.until, "someday")
    qtbot.keyClick(log.until, Qt.Key.Key_Return)
    assert log.span.text() == (
        "'someday' is not a date or time; write e.g. 2026-11-29 or 2026-11-29T14:00:00Z."
    )


def test_issue21_item5_a_row_leads_to_its_note_and_to_its_suggestion(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    w = inspector.window
    show_tab(qtbot, inspector, w.audit)
    log = w.audit.log
    _choose(qtbot, inspector, log.action, "deleted")
    [deleted] = _journal(inspector, AuditFilter(actions=("deleted",)))
    log.table.setFocus()
    log.table.selectRow(0)
    assert log.open_button.isEnabled()
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT) as shown:
        qtbot.keyClick(log.table, Qt.Key.Key_Return)
    wait_idle(qtbot, inspector)
    assert shown.args == [deleted["links"][0]["id"]]
    assert w.tabs.currentIndex() == 0
    show_tab(qtbot, inspector, w.audit)
    _choose(qtbot, inspector, log.action, "candidate_reviewed")
    [first, _second] = _journal(inspector, AuditFilter(actions=("candidate_reviewed",)))
    log.table.setFocus()
    log.table.selectRow(0)
    with qtbot.waitSignal(inspector.controller.candidates_shown, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(log.table, Qt.Key.Key_Return)
    wait_idle(qtbot, inspector)
    assert w.tabs.currentWidget() is w.candidates
    chosen = w.candidates.current()
    assert chosen is not None and chosen["id"] == first["candidate"]


def test_issue21_item5_only_the_chosen_note_and_the_listing_saved_as_csv(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    note = select_note(qtbot, inspector, "Lives in Grenoble.")
    w = inspector.window
    show_tab(qtbot, inspector, w.audit)
    log = w.audit.log
    assert log.note_only.isEnabled() and "Grenoble" in log.note_only.text()
    assert note in log.note_only.toolTip() and note not in log.note_only.text()
    with qtbot.waitSignal(inspector.controller.audit_shown, timeout=SIGNAL_TIMEOUT):
        log.note_only.setChecked(True)
    wait_idle(qtbot, inspector)
    about = _journal(inspector, AuditFilter(note=note))
    assert about and log.model.rowCount() == len(about)
    target = tmp_path / "maya-audit.csv"
    inspector.prompts.path = str(target)
    with qtbot.waitSignal(inspector.controller.audit_log.csv_saved, timeout=SIGNAL_TIMEOUT):
        qtbot.mouseClick(log.csv_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, inspector)
    with target.open(newline="", encoding="utf-8") as f:
        lines = list(csv.reader(f))
    assert [int(line[0]) for line in lines[1:]] == [r["seq"] for r in about]
    assert inspector.prompts.asked[-1][0] == "save_path"
    log.note_only.setChecked(False)
    wait_idle(qtbot, inspector)
    assert _rows(inspector)[-1][2] == "saved audit log entries as CSV to a file"


def test_issue21_item5_the_timeline_pages_back_through_every_note(
    qtbot: Any, inspector: Inspector, demo_path: Path, monkeypatch: Any
) -> None:
    from engram.gui.controllers import timeline as timeline_controller

    monkeypatch.setattr(timeline_controller, "TIMELINE_ROWS", 5)  # a page of 5, not 300
    unlock(qtbot, inspector, demo_path)
    w = inspector.window
    pager, view = w.timeline_pager, w.timeline
    show_tab(qtbot, inspector, w.timeline_tab)
    total = 14  # maya's notes in the demo, of every status
    assert pager.span.text() == f"Notes 1–5 of {total}, counted from the newest."
    assert not pager.newer_button.isEnabled() and pager.older_button.isEnabled()
    pages = [[r.note for r in view._rows]]
    while pager.older_button.isEnabled():
        with qtbot.waitSignal(inspector.controller.timeline.timeline_shown, timeout=SIGNAL_TIMEOUT):
            qtbot.mouseClick(pager.older_button, Qt.MouseButton.LeftButton)
        pages.append([r.note for r in view._rows])
    assert [len(p) for p in pages] == [5, 5, 4]
    assert pager.span.text() == f"Notes 11–14 of {total}, counted from the newest."
    seen = [n for p in pages for n in p]
    assert len({n.id for n in seen}) == total  # every note once
    newest_first = sorted(seen, key=lambda n: n.created_seq, reverse=True)
    assert [n.id for p in pages for n in reversed(p)] == [n.id for n in newest_first]
    with qtbot.waitSignal(inspector.controller.timeline.timeline_shown, timeout=SIGNAL_TIMEOUT):
        qtbot.mouseClick(pager.newer_button, Qt.MouseButton.LeftButton)
    assert [r.note for r in view._rows] == pages[1]
