"""How Engram's work in child processes is started, and how the bundle becomes one.

The erasure's file scan (store/file_scan.py), verify (control/verify_process.py) and the
access report (control/report_printing.py, gui/report_printer.py) each run in a child
process of their own, started as `python -m <module>`; a frozen bundle has no `-m`, so its
executable is started with the child's flag instead, and packaging/engram_entry.py hands
it to that module before the command line is read.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


def child_command(module: str, flag: str) -> list[str]:
    """The command that starts `module` as a child: `python -m module`, or in a frozen
    bundle its own executable with `flag`."""
    if getattr(sys, "frozen", False):
        return [sys.executable, flag]
    return [sys.executable, "-m", module]


def become_child(argv: list[str], flag: str, main: Callable[[], int]) -> None:
    """The bundle's hook: when started with `flag`, be that child (and exit with its code)."""
    if argv[1:2] == [flag]:
        sys.exit(main())
