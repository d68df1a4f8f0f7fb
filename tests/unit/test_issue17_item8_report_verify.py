"""Issue 17 item 8: the access report's integrity check runs in a child process, as the
window's Verify does (control/verify_process.py): on 100k notes its walk on a worker
thread held the window for over 100 ms at a time while the report was written.

Python's audit hooks (PEP 578) report every process started; the hook only records."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from engram.control import forensics
from engram.control.access_report import build_report
from engram.control.demo import MAYA, build_demo
from engram.control.session import PersonSession
from engram.store import crypto
from engram.store.store import Store
from tests.conftest import PASSPHRASE

STARTED: list[str] = []
WATCHING = [False]


def _record(event: str, args: tuple[Any, ...]) -> None:
    if WATCHING[0] and event == "subprocess.Popen":
        STARTED.append(" ".join(str(a) for a in args[1] or ()))


sys.addaudithook(_record)  # an audit hook stays for the process: it records only when asked


def test_issue17_item8_the_reports_integrity_check_runs_in_a_child_process(
    tmp_path: Path,
) -> None:
    location = tmp_path / "demo.engram"
    build_demo(str(location), passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    twin = tmp_path / "twin.engram"
    for end in ("", ".checkpoint"):
        shutil.copy(f"{location}{end}", f"{twin}{end}")
    twin_store = Store.open(str(twin), passphrase=PASSPHRASE)
    expected = forensics.verify_store(twin_store)
    twin_store.close()
    store = Store.open(str(location), passphrase=PASSPHRASE)
    STARTED.clear()
    WATCHING[0] = True
    try:
        report = build_report(PersonSession(store, MAYA, "staff:dana"))
    finally:
        WATCHING[0] = False
        store.close()
    assert [s for s in STARTED if "engram.control.verify_process" in s]
    integrity = " ".join(
        line for block in report.section("integrity").blocks for line in block.lines
    )
    assert f"all {expected.entries:,} entries" in integrity


def test_issue17_item8_the_whole_report_is_made_in_a_child_not_in_this_process(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Gathering 100,000 notes into blocks on a worker thread held the window for 70–150 ms
    at a time: the report is built, checked and printed by a child, and this process only
    writes the bytes it sends (and signs them)."""
    from engram.control import access_report, access_report_file
    from engram.control.report_signature import check_report

    location = tmp_path / "demo.engram"
    build_demo(str(location), passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)

    def not_here(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the report was built in the window's process")

    monkeypatch.setattr(access_report, "build_report", not_here)
    monkeypatch.setattr(access_report_file, "build_report", not_here, raising=False)
    store = Store.open(str(location), passphrase=PASSPHRASE)
    STARTED.clear()
    WATCHING[0] = True
    try:
        written = access_report_file.save_access_report(
            PersonSession.open(store, MAYA, "staff:dana"), str(tmp_path / "maya.pdf")
        )
    finally:
        WATCHING[0] = False
    assert written is not None
    assert [s for s in STARTED if "engram.gui.report_printer" in s]
    check = check_report(written.read_bytes(), store.info.id, store.info.verify_key)
    store.close()
    assert check.ok, check.sentence
