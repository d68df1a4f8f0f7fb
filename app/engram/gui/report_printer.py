"""The child process that makes an access report (control/report_printing.py is the
parent's side): it opens the store read-only as the parent has it (control/store_child.py),
builds the person's report (control/access_report.build_report, verify included), prints
it block by block (gui/access_report.PdfPrinter) and sends the PDF's bytes up a chunk at a
time. Nothing of it runs in the window's process."""

from __future__ import annotations

import os
import sys
from typing import Any

from engram.control import store_child
from engram.control.report_printing import CHILD_FLAG, ReportJob, phase_progress
from engram.store.child_process import become_child
from engram.store.store import Store

PROGRESS_EVERY = 100  # blocks printed between two progress messages


def _make(store: Store, job: Any, channel: store_child.Channel) -> None:
    # Qt only now: the bundle's entry imports this module on every start (run_child).
    from engram.control.access_report import build_report
    from engram.control.session import PersonSession
    from engram.gui.access_report import PdfPrinter, offscreen_application

    assert isinstance(job, ReportJob)
    _application = offscreen_application()  # fonts need it; held while printing

    def progress(done: int, total: int) -> None:
        channel.send(("progress", (done, total)))

    session = PersonSession.open(store, job.person, job.actor)
    report = build_report(session, None, phase_progress(progress, 0))
    printing = phase_progress(progress, 1)
    assert printing is not None
    printer = PdfPrinter(report.title)
    total, done = report.block_count(), 0
    for section in report.sections:
        printer.section(section)
        done += 1
        for block in section.blocks:
            printer.block(block)
            done += 1
            if done % PROGRESS_EVERY == 0:
                printing(done, total)
    data = printer.finish()
    printing(total, total)
    for start in range(0, len(data), job.chunk):
        channel.send(("pdf", data[start : start + job.chunk]))


def child_main() -> int:
    """Be the child: read the request, make the report, send its PDF up."""
    return store_child.serve_child(_make)


def run_child(argv: list[str]) -> None:
    """The frozen bundle's hook: be the child when started with CHILD_FLAG."""
    become_child(argv, CHILD_FLAG, child_main)


if __name__ == "__main__":
    code = child_main()
    sys.stdout.flush()
    os._exit(code)  # what the report held goes with the process, not object by object
