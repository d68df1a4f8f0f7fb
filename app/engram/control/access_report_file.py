"""Writing a person's access report to a file: build it (control.access_report), print it
in a child process (control.report_printing) straight into the file, signing every byte
with the store's key as it passes (control.report_signature), owner-only, and record it in
the person's audit log.
The inspector runs this in the background; `engram report` runs it in the foreground.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from engram.control.access_report import ReportCancelled, build_report
from engram.control.export_record import publish_recorded
from engram.control.private_file import PrivateFile
from engram.control.report_document import ReportDocument
from engram.control.report_printing import print_report
from engram.control.report_signature import content_hasher, signature_block
from engram.control.session import PersonSession
from engram.model.progress import Progress
from engram.model.release import let_go

FULL_COLLECTIONS_NEVER = 1 << 30  # a full-collection threshold no report reaches


@contextmanager
def collector_paused() -> Iterator[None]:
    """Keep the cyclic garbage collector's full passes from running while a report is
    built: on 100,000 notes each walks the report's objects holding the interpreter — and
    so the inspector's window — for a second at a time. The young generations still run:
    switching the collector off altogether left millions of objects to the first young
    collection after the report, a 2 s stop of every thread (issue 17 item 8). The full
    threshold is restored afterwards."""
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTIONS_NEVER)
    try:
        yield
    finally:
        young, middle, _held = gc.get_threshold()
        gc.set_threshold(young, middle, full)


def write_signed_report(
    session: PersonSession,
    write: Callable[[bytes], None],
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> None:
    """Build, print and sign the report, handing the file's bytes to `write` a chunk at a
    time: the PDF as the printing child sends it, hashed as it passes, then the signature
    block. No copy of the whole file is ever made (issue 17 item 8)."""
    report = build_report(session, None, _share(progress, 0), cancelled)
    hasher = content_hasher()

    def sink(chunk: bytes) -> None:
        write(chunk)
        hasher.update(chunk)

    try:
        print_report(report, sink, _share(progress, 1), cancelled)
    finally:
        _let_go_of(report)  # before the collector comes back, and a piece at a time
    write(signature_block(hasher.digest(), session.store.info.id, session.store.signer))


def _let_go_of(report: ReportDocument) -> None:
    """Free a printed report section by section, its blocks a piece at a time: a
    100,000-note report freed at once keeps the interpreter (and the window) for a third
    of a second (issue 17 item 8)."""
    while report.sections:
        blocks = list(report.sections.pop().blocks)
        let_go(blocks)


def _share(progress: Progress | None, phase: int) -> Progress | None:
    """One phase's progress (0: gathering and checking, 1: printing) as half of all."""
    if progress is None:
        return None
    report = progress

    def scaled(done: int, total: int) -> None:
        report((phase * 1000 + (1000 * done) // max(total, 1)) // 2, 1000)

    return scaled


def save_access_report(
    session: PersonSession,
    path: str,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Path | None:
    """Build, print, sign and write the report to `path`, owner-only (0600), and record it
    in the person's audit log. None, with nothing written or recorded, when `cancelled`
    says stop (a lock came meanwhile)."""
    stop = cancelled or (lambda: False)
    with PrivateFile(path, "access report") as file:
        with collector_paused():
            try:
                write_signed_report(session, file.write, progress, stop)
            except ReportCancelled:
                return None  # the temporary file goes with the block: nothing written
        if stop():
            return None
        file.finish()
        return publish_recorded(session, file, "access_report")
