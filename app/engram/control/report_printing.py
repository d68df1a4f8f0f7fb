"""Printing the access report in a child process, so the inspector's window never waits
(the parent's side; the child, which needs Qt, is gui/report_printer.py).

Qt's text layout holds the interpreter lock for the whole of each call, and a worker
thread descheduled while holding it (two busy cores are enough) leaves the UI thread
waiting. On 100,000 notes printing is five sixths of the report's time, so it happens in a
child: this process streams the report's sections and blocks down a pipe (pickled a
hundred blocks at a time, so no single call is long), the child prints each as it arrives
(gui/access_report.PdfPrinter) and answers with the PDF's bytes. The pipe's back-pressure
keeps the two in step, so blocks sent is the printing's progress. The answer is read a
megabyte at a time and handed to a sink (the file being written, and its digest), never
held whole: an 81 MB PDF joined, copied or hashed in one piece held the interpreter, and
so the window, for a quarter of a second (issue 17 item 8). Nothing else touches the
disk: the report's plaintext stays in the two processes' memory and the file written.

A frozen bundle's executable becomes the child when started with CHILD_FLAG
(packaging/engram_entry.py), as the erasure's file scan does.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import IO

from engram.control.access_report import ReportCancelled
from engram.control.report_document import ReportDocument, Section
from engram.model.errors import EngramError
from engram.model.progress import Progress

CHILD_FLAG = "--engram-print-report"
BATCH = 100  # blocks per message down the pipe: a millisecond or two to pickle
CHUNK = 1 << 20  # bytes of the PDF read from the child at a time
PDF_MAGIC = b"%PDF"


class PrintFailed(EngramError):
    """The child that prints the report stopped without a PDF."""


def _command() -> list[str]:
    if getattr(sys, "frozen", False):
        return [sys.executable, CHILD_FLAG]
    # By module name, not by import: this layer knows no Qt; the child is the GUI's.
    return [sys.executable, "-m", "engram.gui.report_printer"]


def print_report(
    report: ReportDocument,
    sink: Callable[[bytes], None],
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> int:
    """Print the report's PDF in a child process, handing its bytes to `sink` a chunk at a
    time as they come; returns how many there were. ReportCancelled (the child killed)
    when `cancelled` says stop; PrintFailed when the child fails (the sink may have had
    part of it: the caller throws that away)."""
    stop = cancelled or (lambda: False)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}  # the child shows nothing
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(
            _command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, env=env
        )
        assert child.stdin is not None and child.stdout is not None
        written = 0
        try:
            _send(report, child.stdin, progress, stop)
            child.stdin.close()
            written = _receive(child.stdout, sink, stop)
            code = child.wait()
        except (BrokenPipeError, ReportCancelled) as error:
            child.kill()
            child.wait()
            if isinstance(error, ReportCancelled):
                raise
            code = child.returncode
        finally:
            with contextlib.suppress(OSError):
                child.stdout.close()
        if code != 0 or written <= len(PDF_MAGIC):
            errors.seek(0)
            said = errors.read().decode("utf-8", "replace").strip().splitlines()
            raise PrintFailed(
                f"The access report could not be printed (the printing process stopped"
                f"{': ' + said[-1] if said else f' with code {code}'}); nothing was written."
            )
    return written


def _receive(out: IO[bytes], sink: Callable[[bytes], None], stop: Callable[[], bool]) -> int:
    """The child's PDF, a chunk at a time into `sink`; 0 when it is no PDF at all."""
    read = getattr(out, "read1", out.read)
    first = read(CHUNK)
    if not first.startswith(PDF_MAGIC):
        out.read()  # whatever it said instead: drained, so it can exit
        return 0
    written = 0
    chunk = first
    while chunk:
        sink(chunk)  # each chunk's write and hash let go of the interpreter
        written += len(chunk)
        if stop():
            raise ReportCancelled
        chunk = read(CHUNK)
    return written


def _send(
    report: ReportDocument, out: IO[bytes], progress: Progress | None, stop: Callable[[], bool]
) -> None:
    total, done = report.block_count(), 0

    def send(message: tuple[str, object]) -> None:
        # One pickle per message, each with its own memo: memory stays flat, and a
        # message never refers back into another. Pickled first, then written: the write
        # waits on the child without holding the interpreter (pickle.dump straight into
        # the pipe was seen holding it for over 50 ms).
        out.write(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))

    send(("report", report.title))
    for section in report.sections:
        send(("section", Section(section.title, (), section.intro, section.new_page, section.key)))
        done += 1
        for start in range(0, len(section.blocks), BATCH):
            if stop():
                raise ReportCancelled
            batch = section.blocks[start : start + BATCH]
            send(("blocks", batch))
            done += len(batch)
            if progress is not None:
                progress(done, total)
    send(("end", None))
    out.flush()
