"""Issue 9 item 3: erasure while another process holds a read transaction on the store.

A reader of an older snapshot pins the erased pages in the database file and the WAL. An
Engram process is asked to let go (the release request) and does; a program that is not
Engram (a backup, the sqlite3 shell) cannot be asked, so the erase fails in one sentence
with a non-zero exit, leaves a pending mark that verify reports, and the next open after
the reader is gone finishes it. Never an exit 0 with bytes left (C3).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.control.erase import erase_person
from engram.control.session import PersonSession
from engram.model.errors import ErasureIncomplete
from engram.model.ids import PersonId
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE
from tests.forensics import fill, traces

ROOT = Path(__file__).resolve().parents[2]
PERSON, OTHER = PersonId("canary"), PersonId("other")


class Reader:
    """A second process holding a read transaction on the store."""

    def __init__(self, kind: str, store_path: Path, tmp_path: Path, seconds: float) -> None:
        self.ready = tmp_path / f"{kind}.ready"
        env = {**os.environ, "ENGRAM_TEST_PASSPHRASE": PASSPHRASE}
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.store_worker",
                kind,
                str(store_path),
                str(self.ready),
                str(seconds),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while not self.ready.exists():
            assert self.process.poll() is None, self.process.communicate()
            assert time.monotonic() < deadline, "the reader never started"
            time.sleep(0.02)

    def outcome(self) -> str:
        out, err = self.process.communicate(timeout=60)
        assert self.process.returncode == 0, err
        return out.strip()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


@pytest.fixture
def readers(store_path: Path, tmp_path: Path) -> Iterator[list[Reader]]:
    started: list[Reader] = []
    yield started
    for reader in started:
        reader.stop()


def test_issue9_item3_an_engram_reader_lets_go_and_the_erase_finishes_clean(
    store: Store, store_path: Path, tmp_path: Path, readers: list[Reader]
) -> None:
    canary, captured = fill(store, PERSON, OTHER)
    reader = Reader("hold-engram", store_path, tmp_path, seconds=60)
    readers.append(reader)
    report = erase_person(PersonSession.open(store, PERSON), "canary", wait_s=20).to_json()
    assert report["asked_others_to_let_go"] is True
    assert report["wal_checkpoint"] == "complete" and report["pending_erasures"] == []
    assert report["raw_file_scan"]["found"] == 0
    assert traces(store_path, captured, canary) == []  # bytes left after success: 0
    assert reader.outcome() == "released"  # it stopped its old read instead of pinning pages
    check = verify(store)
    assert check.ok, check.problems


def test_issue9_item3_a_foreign_reader_makes_the_erase_fail_and_stay_pending(
    store: Store, store_path: Path, tmp_path: Path, readers: list[Reader]
) -> None:
    canary, captured = fill(store, PERSON, OTHER)
    reader = Reader("hold-sqlite", store_path, tmp_path, seconds=60)
    readers.append(reader)
    with pytest.raises(ErasureIncomplete) as raised:
        erase_person(PersonSession.open(store, PERSON), "canary", wait_s=1.0)
    message = str(raised.value)
    assert "another program is still reading the store" in message
    assert message.count(". ") == 0 and message.endswith(".")
    assert traces(store_path, captured)  # the bytes really are still there: no success claimed
    report = verify(store)
    assert not report.ok
    assert any("is not finished" in p for p in report.problems)
    reader.stop()  # the backup ends
    store.close()
    reopened = Store.open(str(store_path), passphrase=PASSPHRASE)  # the next open finishes it
    try:
        assert traces(store_path, captured, canary) == []
        check = verify(reopened)
        assert check.ok, check.problems
    finally:
        reopened.close()


def test_issue9_item3_the_cli_exits_non_zero_with_one_sentence(
    store: Store, store_path: Path, tmp_path: Path, readers: list[Reader], cli: object
) -> None:
    fill(store, PERSON, OTHER)
    store.close()
    readers.append(Reader("hold-sqlite", store_path, tmp_path, seconds=60))
    result = cli("person", "erase", "canary", "--confirm", "canary", "--wait", "0.5")  # type: ignore[operator]
    assert result.code != 0
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "was erased" in lines[0] and "still reading" in lines[0]
    assert "Traceback" not in result.err and result.out == ""


def test_issue9_item3_an_open_store_without_a_reader_is_not_disturbed(
    store: Store, store_path: Path
) -> None:
    """The request is only posted when a reader is in the way; plain erases post nothing."""
    fill(store, PERSON, OTHER)
    report = erase_person(PersonSession.open(store, PERSON), "canary").to_json()
    assert report["asked_others_to_let_go"] is False
    assert not store_path.with_name(store_path.name + ".release").exists()


def test_issue9_item3_a_pending_mark_deleted_by_hand_is_still_reported(
    store: Store, store_path: Path, tmp_path: Path, readers: list[Reader]
) -> None:
    """The mark is covered by the signed ledger: removing it to hide an unfinished erasure
    is itself reported."""
    import sqlite3

    fill(store, PERSON, OTHER)
    readers.append(Reader("hold-sqlite", store_path, tmp_path, seconds=60))
    with pytest.raises(ErasureIncomplete):
        erase_person(PersonSession.open(store, PERSON), "canary", wait_s=0.5)
    readers[0].stop()
    store.close()
    with sqlite3.connect(store_path) as raw:
        raw.execute("DELETE FROM pending_erasures")
    raw.close()
    reopened = Store.open(str(store_path), passphrase=PASSPHRASE)
    try:
        report = verify(reopened)
    finally:
        reopened.close()
    assert not report.ok
    assert any("pending_erasures" in p for p in report.problems), report.problems
