"""Verify run in a child process, so the inspector's window never waits on it (issue 17
item 8): walking every chain of a 100,000-note store allocates millions of objects, and
the collector's generation-2 passes over them, on a worker thread, held the interpreter
(and so the UI thread) for a second at a time.

`verify_in_child` starts `python -m engram.control.verify_process` (or the bundle's
`engram` with CHILD_FLAG) through control/store_child.py: the child opens the store
read-only itself with the key sent down its stdin, runs `forensics.verify_store` exactly as
the window did, and streams progress and the report back. Cancel and lock kill it. The
checkpoint file and this computer's anchor are written by the child, under the
checkpoint's file lock, as verify in the parent would have; an anchor for the OS keyring
comes up the pipe and the parent writes it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO, Any

from engram.control import store_child
from engram.control.verify_report import VerifyReport
from engram.model.errors import EngramError
from engram.model.progress import Progress
from engram.store.child_process import become_child, child_command
from engram.store.store import Store

CHILD_FLAG = "--engram-verify"


class VerifyFailed(EngramError):
    """The child that verifies stopped without a report."""


class VerifyStopped(EngramError):
    """Verify was cancelled: the child was killed."""


def verify_in_child(
    store: Store,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    started: Callable[[int], None] | None = None,
) -> VerifyReport:
    """`forensics.verify_store(store, progress, cancelled)`, run by a child process.
    VerifyStopped when `cancelled` says stop (the child killed at once); VerifyFailed when
    the child fails. `started` is told the child's pid."""
    reports: list[VerifyReport] = []

    def handle(kind: str, value: Any) -> None:
        if kind == "report":
            reports.append(value)

    try:
        store_child.run_child(
            store,
            child_command("engram.control.verify_process", CHILD_FLAG),
            None,
            handle,
            what="Verify",
            failure=VerifyFailed,
            progress=progress,
            cancelled=cancelled,
            started=started,
        )
    except store_child.ChildStopped:
        raise VerifyStopped("Verify was cancelled.") from None
    if not reports:
        raise VerifyFailed("Verify could not finish (its process sent no report).")
    return reports[-1]


def _verify(store: Store, _job: object, channel: store_child.Channel) -> None:
    from engram.control import forensics

    report = forensics.verify_store(
        store, lambda done, total: channel.send(("progress", (done, total))), lambda: False
    )
    channel.send(("report", report))


def child_main(source: IO[bytes] | None = None, sink: IO[bytes] | None = None) -> int:
    """Be the child: read the request, verify, write progress and the report."""
    return store_child.serve_child(_verify, source, sink)


def run_child(argv: list[str]) -> None:
    """The frozen bundle's hook: be the child when started with CHILD_FLAG."""
    become_child(argv, CHILD_FLAG, child_main)


if __name__ == "__main__":
    sys.exit(child_main())
