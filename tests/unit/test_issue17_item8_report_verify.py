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
