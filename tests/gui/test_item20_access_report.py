"""Issue 8 item 20: File > Save access report… writes a readable, owner-only PDF of
everything kept about the person (Qt's QTextDocument and QPdfWriter, off the UI thread)."""

from __future__ import annotations

import shutil
import stat
import subprocess
import threading
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from engram.control.demo import MAYA
from engram.control.session import PersonSession
from engram.gui.access_report import day, save_access_report
from engram.gui.tasks import TaskRunner
from engram.runtime.conversations import conversations_of
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.gui.conftest import SIGNAL_TIMEOUT

pytestmark = pytest.mark.skipif(
    shutil.which("pdftotext") is None, reason="poppler-utils (bootstrap.sh --for test) is missing"
)


def pdf_text(path: Path) -> str:
    """The PDF's text as poppler reads it, ligatures (ﬁ, ﬀ) unfolded by NFKC."""
    done = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, check=True)
    return unicodedata.normalize("NFKC", done.stdout.decode("utf-8"))


def test_item20_the_report_is_written_off_the_ui_thread_owner_only_and_readable(
    qtbot: Any, demo_path: Path, tmp_path: Path
) -> None:
    store = Store.open(str(demo_path), passphrase=PASSPHRASE)
    try:
        session = PersonSession(store, MAYA, "staff:test")
        runner = TaskRunner()
        threads: list[threading.Thread] = []
        target = tmp_path / "maya-access-report.pdf"

        def work(context: Any) -> Path:
            threads.append(threading.current_thread())
            return save_access_report(session, str(target), context.progress, context.cancelled)

        written: list[Path] = []
        runner.run(work, written.append)
        qtbot.waitUntil(lambda: bool(written), timeout=SIGNAL_TIMEOUT * 3)
        assert threads[0] is not threading.main_thread()
        first_conversation = conversations_of(store, MAYA)[0]
    finally:
        store.close()
    assert written == [target] and target.read_bytes().startswith(b"%PDF")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    text = " ".join(pdf_text(target).split())
    assert "What Engram keeps about maya" in text
    assert "Allergic to penicillin." in text  # a note's text
    assert f"the conversation of {day(first_conversation.created_at)}" in text  # its date
    assert "Bonjour! I just moved to Lyon" in text  # its first words
    assert "Verified: all" in text and "check out" in text  # the verify status
    assert "maya has not been erased" in text  # the erasure status
    assert "Closed by “Lives in Grenoble.” — a contradiction" in text
    assert "staff:dana" in text  # the audit log names who acted
