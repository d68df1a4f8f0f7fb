"""The child process that prints an access report (control/report_printing.py is the
parent's side): it reads the report's sections and blocks from stdin as the parent
streams them, prints each as it arrives, and writes the PDF's bytes to stdout."""

from __future__ import annotations

import contextlib
import os
import pickle
import sys

from engram.control.report_printing import CHILD_FLAG


def child_main() -> int:
    """Be the child: read the report from stdin, print it, write the PDF to stdout."""
    # Qt only now: the bundle's entry imports this module on every start (run_child).
    from engram.gui.access_report import PdfPrinter, offscreen_application

    # Background work: on a busy machine the window's own thread should win the CPU.
    with contextlib.suppress(OSError):
        os.nice(10)
    _application = offscreen_application()  # fonts need it; held while printing
    source = sys.stdin.buffer
    # Only the parent writes this pipe: what it unpickles is what the parent pickled.
    kind, title = pickle.load(source)
    if kind != "report":
        return 2
    printer = PdfPrinter(str(title))
    while True:
        kind, value = pickle.load(source)
        if kind == "section":
            printer.section(value)
        elif kind == "blocks":
            for block in value:
                printer.block(block)
        elif kind == "end":
            break
        else:
            return 2
    sys.stdout.buffer.write(printer.finish())
    sys.stdout.buffer.flush()
    return 0


def run_child(argv: list[str]) -> None:
    """The frozen bundle's hook: be the child when started with CHILD_FLAG."""
    if argv[1:2] == [CHILD_FLAG]:
        sys.exit(child_main())


if __name__ == "__main__":
    sys.exit(child_main())
