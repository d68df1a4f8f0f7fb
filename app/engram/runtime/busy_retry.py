"""Waiting out a store another program keeps writing to.

A write waits the store's busy timeout for the write lock (dialect.BUSY_TIMEOUT_MS); under
a steady stream of other writers (an HTTP server taking turns and usage records) a long
job can still lose that wait. Background work that is not answering anyone — `engram
learn`, the learning worker, digest lines — tries again with backoff instead of failing,
for a bounded while; a write that rolled back wrote nothing, so trying again is safe.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from engram.store.errors import OperationalError, is_busy

log = logging.getLogger(__name__)

T = TypeVar("T")

FIRST_WAIT_SECONDS = 0.1
LONGEST_WAIT_SECONDS = 5.0
GIVE_UP_SECONDS = 120.0  # past this the busy error goes to the caller, which says so


def backoff(attempt: int) -> float:
    """The pause before try number `attempt` + 1 (attempt 0 was the first): doubling,
    capped."""
    return min(FIRST_WAIT_SECONDS * 2.0**attempt, LONGEST_WAIT_SECONDS)


def while_busy(work: Callable[[], T], *, give_up_seconds: float = GIVE_UP_SECONDS) -> T:
    """`work()`, tried again with backoff while the store is busy with another writer."""
    deadline = time.monotonic() + give_up_seconds
    attempt = 0
    while True:
        try:
            return work()
        except OperationalError as error:
            if not is_busy(error):
                raise
            pause = backoff(attempt)
            if time.monotonic() + pause > deadline:
                raise
            log.info("store busy with another writer; trying again in %.1f s", pause)
            time.sleep(pause)
            attempt += 1
