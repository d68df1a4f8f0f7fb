"""Issue 18 item 9, "Reports are typed; faces print verdicts, they do not make them": the
inspector's erasure summary and its integrity check print the engine's verdict, sentence
and advice — on a store made by the previous release the summary says the erasure did NOT
fully hold, and never "Nothing readable … remains"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engram.control import forensics
from engram.control.erase import erase_person
from engram.control.erasure_report import ErasureReport, ErasureVerdict, FileScan, PageRewrite
from engram.control.session import PersonSession
from engram.gui.summaries import erasure_summary
from engram.store.pending_erasure import FINISH_ADVICE
from engram.store.store import Store
from tests.forensics import ERASED, OTHER, fill, previous_release_store
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, unlock, wait_idle


def test_issue18_item9_the_summary_says_did_not_hold_with_the_engines_advice(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    previous_release_store(store, monkeypatch)
    report = erase_person(PersonSession.open(store, ERASED, "staff:dana"), ERASED)
    text = erasure_summary(report)
    assert f"Result: {report.sentence()}" in text and "did NOT fully hold" in text
    assert f"What to do: {report.advice}" in text and report.advice
    assert "Nothing readable" not in text and "erase again" not in text


def test_issue18_item9_the_window_erases_a_previous_release_store_and_says_it_did_not_hold(
    qtbot: Any,
    inspector: Inspector,
    store: Store,
    store_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    previous_release_store(store, monkeypatch)
    store.close()  # the window opens it
    unlock(qtbot, inspector, store_path, person=ERASED)
    inspector.prompts.typed = ERASED
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        inspector.window.erase_action.trigger()
    wait_idle(qtbot, inspector)
    title, text = inspector.prompts.reports[-1]
    assert title == f"{ERASED} was erased"
    assert "Result: The erasure did NOT fully hold: nothing" in text
    assert "What to do: Those rows are signed with the id" in text
    assert "Nothing readable" not in text
    assert "did NOT fully hold" in inspector.window.statusBar().currentMessage()


def test_issue18_item9_the_audit_tab_prints_the_engines_verify_sentence(
    qtbot: Any, inspector: Inspector, store: Store, store_path: Path
) -> None:
    fill(store, ERASED, OTHER)
    expected = forensics.verify_store(store)
    store.close()
    unlock(qtbot, inspector, store_path, person=ERASED)
    with qtbot.waitSignal(inspector.controller.verified, timeout=SIGNAL_TIMEOUT):
        inspector.window.verify_action.trigger()
    wait_idle(qtbot, inspector)
    assert inspector.window.audit.result.text().splitlines()[0] == expected.sentence()
    assert inspector.window.integrity_label.text() == "integrity: ✔ verified"


def test_issue18_item9_traces_left_in_the_files_get_the_engines_finishing_advice() -> None:
    """The report of an erasure whose bytes are still in the files (what the engine raises
    as ErasureIncomplete, and verify reports) advises what they advise: never "erase
    again", which cannot work on a person already gone."""
    report = ErasureReport(
        person="maya",
        erased_at="2026-11-03T10:00:00Z",
        actor="staff:dana",
        erasure_record=3,
        keys_destroyed=("person:maya",),
        rows_deleted={"journal": 2},
        conversations_deleted=0,
        turns_excised=0,
        pseudonymized_rows=0,
        clear_id_rows={},
        wal_checkpoint="busy",
        page_rewrite=PageRewrite("complete", 9, 9),
        frames=4,
        checkpointed=0,
        asked_others_to_let_go=True,
        raw_file_scan=FileScan(("s.engram", "s.engram-wal"), looked_for=5, found=2),
        pending_erasures=(1,),
    )
    assert report.verdict is ErasureVerdict.DID_NOT_HOLD
    text = erasure_summary(report)
    assert f"Result: {report.sentence()}" in text and "2 traces" in text
    assert f"What to do: {report.advice}" in text
    assert report.advice.lower().rstrip(".") == FINISH_ADVICE
    assert "erase again" not in text and "Nothing readable" not in text
