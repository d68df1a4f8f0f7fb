"""Issue 17 item 14: the access report a person can be handed. File > Save access report…
writes, in the background, a signed PDF whose first page is a summary (counts by kind and
scope, what is shared and with whom, what was erased) naming no id, whose second page says
how to ask for a correction or an erasure, where each note lists whom it was disclosed to,
each conversation is kept whole with removed parts marked, and no row is split across
pages."""

from __future__ import annotations

import re
import shutil
import subprocess
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from engram.control.report_document import Block, Counts, ReportDocument, Section
from engram.control.report_signature import check_report
from engram.gui.access_report import report_pdf
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, Modals, unlock

pytestmark = pytest.mark.skipif(
    shutil.which("pdftotext") is None, reason="poppler-utils (bootstrap.sh --for test) is missing"
)

ID = re.compile(r"\b[nctsk]_[0-9a-f]{6,}|staff:|~[0-9a-f]{8,}")


def pdf_text(path: Path, first: int | None = None, *, layout: bool = False) -> str:
    """The PDF's text (one page of it) as poppler reads it, whitespace folded; `layout`
    keeps a table's rows together."""
    pages = [] if first is None else ["-f", str(first), "-l", str(first)]
    pages += ["-layout"] if layout else []
    done = subprocess.run(["pdftotext", *pages, str(path), "-"], capture_output=True, check=True)
    return " ".join(unicodedata.normalize("NFKC", done.stdout.decode("utf-8")).split())


def page_count(path: Path) -> int:
    done = subprocess.run(["pdfinfo", str(path)], capture_output=True, check=True, text=True)
    return int(re.search(r"Pages:\s+(\d+)", done.stdout).group(1))  # type: ignore[union-attr]


def test_item14_the_saved_report_is_the_document_a_data_access_request_deserves(
    qtbot: Any,
    real_inspector: Inspector,
    demo_path: Path,
    modals: Modals,
    tmp_path: Path,
) -> None:
    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    target = tmp_path / "maya-access-report.pdf"
    told: list[str] = []

    def save(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        dialog.selectFile(str(target))
        dialog.accept()

    def read(box: QWidget) -> None:
        assert isinstance(box, QMessageBox)
        told.append(box.text())
        box.accept()

    modals.expect(save)
    modals.expect(read)
    controller = inspector.controller.person_actions
    progress: list[tuple[int, int]] = []
    with qtbot.waitSignal(controller.report_saved, timeout=SIGNAL_TIMEOUT * 3):
        inspector.window.report_action.trigger()
        task = controller._report_task
        assert task is not None  # it runs in the background, with progress
        task.progressed.connect(lambda done, total: progress.append((done, total)))
    qtbot.waitUntil(lambda: bool(told), timeout=SIGNAL_TIMEOUT)
    assert progress and progress[-1][0] <= progress[-1][1]
    assert "It is signed by this store" in told[0]

    # Page 1: the summary, with no id and actors in words.
    first = pdf_text(target, 1)
    assert first.startswith("What Engram keeps about maya")
    assert ID.search(first) is None, ID.search(first)
    rows = pdf_text(target, 1, layout=True)
    assert "By kind fact 8 open thread 2 preference 2 style 2" in rows
    assert "By scope private 10 shared 4" in rows
    assert "The agent 'helper' was given 9 notes." in first
    assert "sam could read answers that used 2 of your notes." in first
    assert "1 note deleted" in first and "1 part of conversations removed" in first
    # Page 2: how to ask for a correction or an erasure, and how to check the file.
    second = pdf_text(target, 2)
    assert second.startswith("How to ask for a correction or an erasure")
    assert "If you want something erased" in second and "engram verify-report FILE" in second
    # Each note: whom it was disclosed to, and its history.
    whole = pdf_text(target)
    assert "Note 5: French" in whole and "Disclosed 3 times" in whole
    assert "who could read the answer: you and sam" in whole
    assert "support staff dana: note 2 “Works at the botanical institute.” made portable" in whole
    # Each conversation as kept, with the removed tool result marked, not missing.
    assert "Maya, are you leading the community garden project this spring?" in whole
    assert "what the tool 'contacts_lookup' answered [Removed on" in whole
    assert "by support staff dana: the text of this part is no longer kept" in whole
    # Signed by this store, over exactly these bytes.
    store = Store.open(str(demo_path), passphrase=PASSPHRASE)
    try:
        assert check_report(target.read_bytes(), store.info.id, store.info.verify_key).ok
    finally:
        store.close()
    assert modals.unexpected == []


def test_item14_no_block_is_split_across_pages(qtbot: Any, tmp_path: Path) -> None:
    """Blocks of varied height, each with a first and a last line: every block's two lines
    land on the same page, however the pages fall."""
    blocks = tuple(
        Block(
            f"Start of block {n}",
            tuple((f"fact {i}", "value " * (n % 7 + 1)) for i in range(n % 5 + 1)),
            tuple(["some words " * (4 + n % 9)] * (n % 6) + [f"End of block {n}."]),
            tone="note" if n % 2 else "turn",
        )
        for n in range(1, 161)
    )
    report = ReportDocument(
        "ana", "Blocks", [Section("Blocks", blocks, new_page=False, key="b")], Counts(), "s", ""
    )
    target = tmp_path / "blocks.pdf"
    target.write_bytes(report_pdf(report))
    pages = page_count(target)
    assert pages > 5
    where: dict[str, int] = {}
    for page in range(1, pages + 1):
        for mark in re.findall(r"(?:Start|End) of block \d+", pdf_text(target, page)):
            where[mark] = page
    for n in range(1, 161):
        assert where[f"Start of block {n}"] == where[f"End of block {n}"], n
