"""The access report made in a child process, so the inspector's window never waits (the
parent's side; the child, which needs Qt to print, is gui/report_printer.py).

On 100,000 notes the report gathers and lays out hundreds of thousands of objects. Done
on a worker thread of the window's process, that work held the interpreter lock in
pieces (Qt's text layout holds it for the whole of each call, and a pickled batch or a
page of rows does too), and every piece was a moment the UI thread could not run: blocks
of 70–150 ms while the report was written (issue 17 item 8). So the whole report is made
by a child: it opens the store read-only as verify's child does (control/store_child.py),
builds the report (control/access_report.build_report, verify included), prints it
(gui/access_report.PdfPrinter) and sends the PDF's bytes up a chunk at a time; this
process only hands each chunk to a sink (the file being written, and its digest), so the
plaintext stays in the two processes' memory and the file written.

A frozen bundle's executable becomes the child when started with CHILD_FLAG
(packaging/engram_entry.py), as the erasure's file scan does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engram.control import store_child
from engram.control.access_report import ReportCancelled
from engram.control.session import PersonSession
from engram.model.errors import EngramError
from engram.model.progress import Progress
from engram.store.child_process import child_command

CHILD_FLAG = "--engram-print-report"
CHUNK = 1 << 20  # bytes of the PDF sent up by the child at a time
PDF_MAGIC = b"%PDF"


class PrintFailed(EngramError):
    """The child that makes the report stopped without a PDF."""


@dataclass(frozen=True, slots=True)
class ReportJob:
    """What the child makes: whose report, for which actor, sent in chunks of what size."""

    person: str
    actor: str
    chunk: int


def phase_progress(progress: Progress | None, phase: int) -> Progress | None:
    """One phase's progress (0: gathering and checking, 1: printing) as half of all."""
    if progress is None:
        return None
    report = progress

    def scaled(done: int, total: int) -> None:
        report((phase * 1000 + (1000 * done) // max(total, 1)) // 2, 1000)

    return scaled


def print_access_report(
    session: PersonSession,
    sink: Callable[[bytes], None],
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> int:
    """Make the session's person's access report in a child process, handing the PDF's
    bytes to `sink` a chunk at a time as they come; returns how many there were.
    ReportCancelled (the child killed) when `cancelled` says stop; PrintFailed when the
    child fails (the sink may have had part of it: the caller throws that away)."""
    written = [0]

    def handle(kind: str, value: Any) -> None:
        if kind != "pdf":
            return
        if written[0] == 0 and not value.startswith(PDF_MAGIC):
            raise PrintFailed("The access report could not be printed; nothing was written.")
        sink(value)  # each chunk's write and hash let go of the interpreter
        written[0] += len(value)

    try:
        store_child.run_child(
            session.store,
            child_command("engram.gui.report_printer", CHILD_FLAG),
            ReportJob(str(session.person), session.actor, CHUNK),
            handle,
            what="The access report",
            failure=PrintFailed,
            progress=progress,
            cancelled=cancelled,
            env={"QT_QPA_PLATFORM": "offscreen"},  # the child shows nothing
        )
    except store_child.ChildStopped:
        raise ReportCancelled from None
    if written[0] <= len(PDF_MAGIC):
        raise PrintFailed("The access report could not be printed; nothing was written.")
    return written[0]
