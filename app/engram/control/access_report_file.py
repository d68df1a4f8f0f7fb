"""Writing a person's access report to a file: made and printed in a child process
(control.report_printing) and written straight into the file, signing every byte
with the store's key as it passes (control.report_signature), owner-only, and record it in
the person's audit log.
The inspector runs this in the background; `engram report` runs it in the foreground.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from engram.control.access_report import ReportCancelled
from engram.control.export_record import publish_recorded
from engram.control.private_file import PrivateFile
from engram.control.report_printing import print_access_report
from engram.control.report_signature import content_hasher, signature_block
from engram.control.session import PersonSession
from engram.model.progress import Progress


def write_signed_report(
    session: PersonSession,
    write: Callable[[bytes], None],
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> None:
    """Make, print and sign the report, handing the file's bytes to `write` a chunk at a
    time: the PDF as the child that makes it sends it (control/report_printing.py), hashed
    as it passes, then the signature block. No copy of the whole file is ever made, and
    nothing of the report is built in this process (issue 17 item 8)."""
    hasher = content_hasher()

    def sink(chunk: bytes) -> None:
        write(chunk)
        hasher.update(chunk)

    print_access_report(session, sink, progress, cancelled)
    write(signature_block(hasher.digest(), session.store.info.id, session.store.signer))


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
        try:
            write_signed_report(session, file.write, progress, stop)
        except ReportCancelled:
            return None  # the temporary file goes with the block: nothing written
        if stop():
            return None
        file.finish()
        return publish_recorded(session, file, "access_report")
