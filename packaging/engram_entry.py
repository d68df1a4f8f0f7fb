"""The bundle's entry point: the `engram` command (CLI and `engram desk`).

The bundle's executable is also started as a child of itself, with a flag of Engram's own
as its first argument; only then are the children's modules imported, so an ordinary start
(`engram --help`) loads none of them (issue 20 item 10).
"""

import sys

if sys.argv[1:2] and sys.argv[1].startswith("--engram-"):
    from engram.control import verify_process
    from engram.gui import report_printer
    from engram.store.file_scan import run_child

    run_child(sys.argv)  # the erasure's file scan runs in a child process (store/file_scan.py)
    report_printer.run_child(sys.argv)  # so does printing an access report (report_printing.py)
    verify_process.run_child(sys.argv)  # and the inspector's verify (control/verify_process.py)

from engram.cli.main import run

run()
