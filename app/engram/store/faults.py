"""Named points where the reliability tests kill the process for real.

`ENGRAM_CRASH_AT=<point>` makes the process send itself SIGKILL when it reaches that point:
no cleanup, no flush, no exit handler — exactly what a power cut or `kill -9` leaves. Unset
(always, outside the tests) each point costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

CRASH_ENV = "ENGRAM_CRASH_AT"

# Inside a passphrase change's transaction, after the new sealed key is written, before it
# commits.
PASSPHRASE_REWRAPPED = "passphrase:rewrapped"
# Inside a write, its entries appended but their chains' heads not yet signed: the
# transaction is still open, so a kill here leaves neither (signed_heads.py).
APPENDED = "write:appended"
# Between a write's commit and its checkpoint-file update.
AFTER_COMMIT = "write:committed"
# Between an erasure's commit and its checkpoint-file update.
ERASE_COMMITTED = "erase:committed"
# After an erasure's checkpoint update, before its WAL checkpoint and file scan.
ERASE_CHECKPOINTED = "erase:checkpointed"
# After the WAL checkpoint and scan, before the pending-erasure mark is removed.
ERASE_SCRUBBED = "erase:scrubbed"


def crash_point(name: str) -> None:
    """Die here, with SIGKILL, when the tests ask for it."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
