"""Issue 15 items 2 and 4: finishing an erasure rewrites every page, and an erasure that
committed is never reported as failed because another process asked readers to let go."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from engram.control.erase import erase_person
from engram.control.persons import ensure_person
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.runtime.conversations import append_turn, start_conversation
from engram.store import erasure_marks
from engram.store.release import CHECK_EVERY_S, ReleaseRequests
from engram.store.store import Store

VICTIM, OTHER = PersonId("victim"), PersonId("other")


def _with_victim(store: Store) -> None:
    ensure_person(store, OTHER)
    shared = start_conversation(store, [VICTIM, OTHER])
    append_turn(store, shared.id, role="user", author=VICTIM, text="victim words " * 20)
    append_turn(store, shared.id, role="user", author=OTHER, text="other words " * 20)


def test_issue15_item4_a_release_request_mid_finish_does_not_fail_a_committed_erase(
    store: Store, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_victim(store)
    other_process = ReleaseRequests(store_path)  # the request file another eraser posts
    original = store.keys.data_key
    posted: list[float] = []

    def key_while_another_erases(conn: Any, key_ref: str, **kwargs: Any) -> bytes:
        reading = not kwargs.get("create")  # finish reading its marks, after the commit
        if key_ref.startswith("erasure-probes:") and reading and not posted:
            # Another Engram process finishes its own erasure while this one reads its marks.
            posted.append(other_process.post())
            time.sleep(CHECK_EVERY_S * 2)
            conn.exec_driver_sql("SELECT 1").scalar()
        return original(conn, key_ref, **kwargs)

    store.keys.forget()
    monkeypatch.setattr(store.keys, "data_key", key_while_another_erases)
    try:
        report = erase_person(PersonSession.open(store, VICTIM, "staff:dana"), VICTIM).to_json()
    finally:
        other_process.withdraw(posted[0]) if posted else None
    assert posted, "the marks were never read"
    assert report["pending_erasures"] == [] and report["raw_file_scan"]["found"] == 0


def test_issue15_item2_finishing_rewrites_every_page_and_says_how_it_checked(
    store: Store,
) -> None:
    _with_victim(store)
    report = erase_person(PersonSession.open(store, VICTIM, "staff:dana"), VICTIM).to_json()
    assert report["page_rewrite"]["rewrite"] == "complete"
    assert report["page_rewrite"]["pages_after"] <= report["page_rewrite"]["pages_before"]
    scan = report["raw_file_scan"]
    assert scan["found"] == 0 and scan["looked_for"] >= 2 and "window" in scan["method"]


def test_issue15_item2_an_old_mark_of_tails_still_reads_as_probes() -> None:
    tails = b"a" * 24 + b"b" * 24
    assert erasure_marks.unframe(tails) == [b"a" * 24, b"b" * 24]
    framed = erasure_marks.frame([b"x" * 40, b"y" * 70])
    assert erasure_marks.unframe(framed) == [b"x" * 40, b"y" * 70]
