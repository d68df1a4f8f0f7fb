"""Usage recorded after the answer: the usage ledger written by a background writer.

A read that hands notes out (a turn's block, memory_recall, memory_search, the block
resource) owes the usage ledger one `item_used` event. Written inside the request, that
event made every read wait for the write lock: while another process held it (an import,
a long learning pass), a read waited the busy timeout and then told the model its memory
was unreadable. A server therefore hands its usage records to a `UsageWriter`: the read
returns at once, and one thread writes what has queued up — one transaction per person
for everything that person's reads queued meanwhile (group commit). A store busy with
another writer is waited out with backoff, never dropped; what is still queued when the
server stops is written before it exits. A process killed outright (kill -9) loses the
records of its last batch only; the notes themselves are never at risk.

The queue is bounded: when it is full (the store has refused writes for a long while),
`record` says so and the read hands out no notes whose use cannot be recorded (A9).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from engram.model.errors import EngramError
from engram.model.events import NewEvent
from engram.model.ids import PersonId
from engram.store import journal
from engram.store.errors import OperationalError, is_busy
from engram.store.store import Store

log = logging.getLogger(__name__)

MAX_PENDING = 10_000  # usage records waiting; past this a read hands out no notes (A9)
BATCH = 1_000  # records of one person written in one transaction at most
FIRST_BACKOFF_SECONDS = 0.05
MAX_BACKOFF_SECONDS = 2.0
CLOSE_SECONDS = 15.0  # how long a stopping server keeps trying to write pending usage
SETTLE_SECONDS = 2.0  # how long showing a note's usage waits for usage still being written


class UsageNotKept(EngramError):
    """A usage record neither written nor queued: the read hands out no notes (A9)."""


class UsageRecorder(Protocol):
    """Where a read's usage record goes: written now, or queued for a writer."""

    def record(self, person: PersonId, event: NewEvent) -> bool:
        """Take the record; False when it cannot be kept (nothing may then be handed out)."""
        ...

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until what was taken so far is written; False if `timeout` ran out first."""
        ...


@dataclass(frozen=True, slots=True)
class WriteNow:
    """Writes each record in its own transaction before the read answers (the CLI, tests,
    the demo: one short-lived process, no answer to keep waiting)."""

    store: Store

    def record(self, person: PersonId, event: NewEvent) -> bool:
        with self.store.write() as txn:
            journal.append(self.store, txn, person, [event])
        return True

    def flush(self, timeout: float | None = None) -> bool:
        return True  # written already


class UsageWriter:
    """One thread writing queued usage records, batched per person, after the answers.

    `flush()` waits until what was queued before it is written (tests, shutdown);
    `close()` writes what is pending, then stops the thread."""

    def __init__(self, store: Store, *, max_pending: int = MAX_PENDING) -> None:
        self.store = store
        self._queue: queue.Queue[tuple[PersonId, NewEvent] | None] = queue.Queue(max_pending)
        self._closed = False
        self._give_up_at: float | None = None  # set by close(): stop waiting out a busy store
        self.written = 0
        self.refused = 0
        self._thread = threading.Thread(target=self._loop, name="engram-usage", daemon=True)
        self._thread.start()

    def record(self, person: PersonId, event: NewEvent) -> bool:
        if self._closed:
            return False
        try:
            self._queue.put_nowait((person, event))
        except queue.Full:
            log.error("usage writer is %d records behind; handing out no notes", MAX_PENDING)
            return False
        return True

    @property
    def pending(self) -> int:
        """Records queued and not yet written (approximate while the thread runs)."""
        return self._queue.unfinished_tasks

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every record queued so far is written; False if `timeout` ran out."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def close(self, wait_seconds: float = CLOSE_SECONDS) -> bool:
        """Write what is pending (for up to `wait_seconds` while the store stays busy), then
        stop. True when nothing was left unwritten."""
        self._closed = True
        self._give_up_at = time.monotonic() + wait_seconds
        self._queue.put(None)
        self._thread.join(wait_seconds)
        left = self._queue.unfinished_tasks - (1 if self._thread.is_alive() else 0)
        if left > 0:
            log.error("%d usage records could not be written before stopping", left)
        return left <= 0 and not self._thread.is_alive()

    # ---- the thread ------------------------------------------------------------------

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            batch: list[tuple[PersonId, NewEvent]] = []
            taken = 1
            if first is None:
                stopping = True
            else:
                batch.append(first)
            while len(batch) < BATCH * 4:  # whatever queued up meanwhile goes in this round
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                taken += 1
                if more is None:
                    stopping = True
                else:
                    batch.append(more)
            try:
                self._write_all(batch)
            finally:
                for _ in range(taken):
                    self._queue.task_done()

    def _write_all(self, batch: Sequence[tuple[PersonId, NewEvent]]) -> None:
        by_person: dict[PersonId, list[NewEvent]] = {}
        for person, event in batch:
            by_person.setdefault(person, []).append(event)
        for person, events in by_person.items():
            for start in range(0, len(events), BATCH):
                self._write(person, events[start : start + BATCH])

    def _write(self, person: PersonId, events: list[NewEvent]) -> None:
        backoff = FIRST_BACKOFF_SECONDS
        while True:
            try:
                self._append(person, events)
                self.written += len(events)
                return
            except OperationalError as error:
                if not is_busy(error):
                    log.exception("usage of %s's notes could not be written", person)
                    self.refused += len(events)
                    return
            except EngramError:  # a note gone meanwhile, the person erased: one at a time
                if len(events) > 1:
                    for event in events:
                        self._write(person, [event])
                    return
                log.info("usage record for %s refused by the journal; dropped", person)
                self.refused += 1
                return
            except Exception:
                log.exception("usage of %s's notes could not be written", person)
                self.refused += len(events)
                return
            give_up_at = self._give_up_at
            if give_up_at is not None and time.monotonic() + backoff > give_up_at:
                log.error(
                    "store still busy: %d usage records of %s not written", len(events), person
                )
                self.refused += len(events)
                return
            time.sleep(backoff)  # another writer holds the store: wait it out, never drop
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)

    def _append(self, person: PersonId, events: list[NewEvent]) -> None:
        with self.store.write() as txn:
            journal.append(self.store, txn, person, events)
