"""Issue 15 items 1 and 2: the erasure's file scan runs in a child process and finds any
fragment of an erased ciphertext, not only its tail; nothing in the process that holds the
store open opens and closes the store's files (that would drop its POSIX locks)."""

from __future__ import annotations

import io
import json
import os
import secrets
import sys
import threading
from pathlib import Path

import pytest

from engram.model.errors import NotAStore
from engram.store import file_scan
from engram.store.file_scan import CHUNK, SMALLEST_FOUND, scan
from engram.store.pending_erasure import scan_files
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.reliability.long_lived_worker import posix_locks

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/locks")


def _file_with(tmp_path: Path, fragment: bytes, at: int, size: int) -> Path:
    data = bytearray(secrets.token_bytes(size))
    data[at : at + len(fragment)] = fragment
    path = tmp_path / "s.engram"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("at", [0, 3, 4093, CHUNK - 13])
def test_issue15_item2_any_fragment_of_31_bytes_is_found_wherever_it_lies(
    tmp_path: Path, at: int
) -> None:
    needle = secrets.token_bytes(224)
    start = 57  # a middle piece: the old scan looked only at the last 24 bytes
    fragment = needle[start : start + SMALLEST_FOUND]
    path = _file_with(tmp_path, fragment, at, CHUNK + 4096)
    other = secrets.token_bytes(100)
    result = scan(path, [needle, other])
    assert result["found"] == 1 and result["looked_for"] == 2
    assert result["scanned"] == ["s.engram"] and "separate process" in result["method"]


def _child_finds(path: Path, needles: list[bytes]) -> int:
    request = json.dumps({"files": [str(path)]}).encode() + b"\n"
    framed = b"".join(len(n).to_bytes(4, "big") + n for n in needles)
    answers = io.StringIO()
    assert file_scan.child_main(io.BytesIO(request + framed), answers) == 0
    return int(json.loads(answers.getvalue().splitlines()[-1])["result"]["found"])


def test_issue19_the_word_filter_misses_no_fragment_at_any_alignment(tmp_path: Path) -> None:
    # The scan first rules chunks out by the file's aligned 64-bit words (issue 19: erase
    # speed); a 31-byte fragment must still be found at every offset in the file and in
    # the ciphertext, in a file whose size is not a multiple of 8, and a shorter one never.
    needle = secrets.token_bytes(160)
    for start in range(8):
        for at in range(8):
            fragment = needle[start + 40 : start + 40 + SMALLEST_FOUND]
            path = _file_with(tmp_path, fragment, 1003 + at, 4099)
            assert _child_finds(path, [needle]) == 1, (start, at)
    short = needle[40 : 40 + SMALLEST_FOUND - 8]
    assert _child_finds(_file_with(tmp_path, short, 1000, 4099), [needle]) == 0


def test_issue19_a_ciphertext_longer_than_a_pass_is_found_across_its_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A needle with more windows than a pass holds is cut into pieces that overlap: a
    # fragment across a cut is still found, and the pieces cover every window once.
    monkeypatch.setattr(file_scan, "WINDOWS_PER_PASS", 100)
    needle = secrets.token_bytes(1000)
    groups = list(file_scan._groups([needle]))
    assert len(groups) == 10 and sum(len(t) for t in file_scan._passes([needle])) == 977
    for start in (85, 90, 95, 100, 970 - SMALLEST_FOUND):
        path = _file_with(tmp_path, needle[start : start + SMALLEST_FOUND], 2003, 6000)
        assert _child_finds(path, [secrets.token_bytes(50), needle]) == 1, start


def test_issue15_item2_side_files_are_scanned_and_clean_files_report_nothing(
    tmp_path: Path,
) -> None:
    needle = secrets.token_bytes(120)
    path = _file_with(tmp_path, b"", 0, 8192)
    (tmp_path / "s.engram-wal").write_bytes(secrets.token_bytes(500) + needle[:40])
    assert scan(path, [secrets.token_bytes(80)])["found"] == 0
    result = scan(path, [needle])
    assert result["found"] == 1 and result["scanned"] == ["s.engram", "s.engram-wal"]


def test_issue15_item2_many_ciphertexts_take_several_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The child's lookup table is bounded: more ciphertext means more passes, not more memory.
    monkeypatch.setattr(file_scan, "WINDOWS_PER_PASS", 1000)
    needles = [secrets.token_bytes(200) for _ in range(50)]
    passes = list(file_scan._passes(needles))
    assert len(passes) >= 8 and all(len(table) <= 1000 for table in passes)
    assert sum(len(table) for table in passes) == 50 * (200 - file_scan.WINDOW + 1)
    path = _file_with(tmp_path, needles[-1][100:140], 5000, 20000)
    request = json.dumps({"files": [str(path)]}).encode() + b"\n"
    framed = b"".join(len(n).to_bytes(4, "big") + n for n in needles)
    answers = io.StringIO()
    assert file_scan.child_main(io.BytesIO(request + framed), answers) == 0
    lines = [json.loads(line) for line in answers.getvalue().splitlines()]
    assert lines[-1] == {"result": {"found": 1}} and len(lines) == len(passes) + 1


@linux_only
def test_issue15_item1_a_second_store_on_the_same_file_keeps_the_first_ones_locks(
    store: Store, store_path: Path
) -> None:
    with store.read() as conn:
        conn.exec_driver_sql("SELECT count(*) FROM journal").scalar()
    held = posix_locks(store_path)
    assert held >= 1
    second = Store.open(str(store_path), passphrase=PASSPHRASE)
    second.close()
    assert posix_locks(store_path) == held


@linux_only
def test_issue15_item1_an_erasure_scan_keeps_this_process_s_locks(
    store: Store, store_path: Path
) -> None:
    with store.read() as conn:
        conn.exec_driver_sql("SELECT count(*) FROM journal").scalar()
    held = posix_locks(store_path)
    scan_files(store, [secrets.token_bytes(64)])
    assert posix_locks(store_path) == held


def test_issue15_item8_a_fifo_at_the_store_path_is_refused_without_hanging(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "pipe.engram"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def opening() -> None:
        try:
            Store.open(str(fifo), passphrase=PASSPHRASE)
        except BaseException as error:
            outcome.append(error)

    worker = threading.Thread(target=opening, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # let the hung open go, then fail
        with open(fifo, "wb"):
            pass
        pytest.fail("opening a FIFO hung")
    assert isinstance(outcome[0], NotAStore)
    assert "not a regular file" in str(outcome[0])
