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
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from engram.control.access_report_file import save_access_report
from engram.control.demo import MAYA
from engram.control.session import PersonSession
from engram.gui.dialogs import documents_folder
from engram.gui.tasks import TaskRunner
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, Modals, unlock

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
    finally:
        store.close()
    assert written == [target] and target.read_bytes().startswith(b"%PDF")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    text = " ".join(pdf_text(target).split())
    assert "What Engram keeps about maya" in text
    assert "Allergic to penicillin." in text  # a note's text
    assert "Conversation 1" in text and "Bonjour! I just moved to Lyon" in text  # its words
    assert "signatures are intact" in text  # the verify status
    assert "What was erased" in text  # the erasure status
    assert "contradicted by note 10 “Lives in Grenoble.”" in text
    assert "support staff dana" in text  # the audit log names who acted (in words)


def test_item20_file_menu_asks_where_in_documents_and_says_it_is_not_encrypted(
    qtbot: Any,
    real_inspector: Inspector,
    demo_path: Path,
    modals: Modals,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    assert inspector.window.report_action.isEnabled()
    opened: list[tuple[str, str, list[str]]] = []
    told: list[str] = []

    def save(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        opened.append(
            (dialog.directory().absolutePath(), dialog.windowTitle(), dialog.nameFilters())
        )
        dialog.selectFile(str(home / "Documents" / "maya-access-report.pdf"))
        dialog.accept()

    def read(box: QWidget) -> None:
        assert isinstance(box, QMessageBox)
        told.append(box.text())
        box.accept()

    modals.expect(save)
    modals.expect(read)
    saved = inspector.controller.person_actions.report_saved
    with qtbot.waitSignal(saved, timeout=SIGNAL_TIMEOUT * 3) as got:
        inspector.window.report_action.trigger()
    qtbot.waitUntil(lambda: bool(told), timeout=SIGNAL_TIMEOUT)
    [(folder, title, filters)] = opened
    assert folder == documents_folder() == str(home / "Documents")
    assert "not encrypted" in title and filters == ["PDF documents (*.pdf)"]
    written = Path(got.args[0])
    assert written == home / "Documents" / "maya-access-report.pdf"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert "not encrypted" in told[0] and str(written) in told[0]
    text = " ".join(pdf_text(written).split())
    assert "Is vegetarian." in text and "signatures are intact" in text
    assert modals.unexpected == []


def test_item20_a_lock_while_writing_writes_nothing(tmp_path: Path, demo_path: Path) -> None:
    store = Store.open(str(demo_path), passphrase=PASSPHRASE)
    try:
        target = tmp_path / "never.pdf"
        result = save_access_report(
            PersonSession(store, MAYA, "staff:test"), str(target), None, lambda: True
        )
    finally:
        store.close()
    assert result is None and not target.exists() and list(tmp_path.glob("*.part")) == []
