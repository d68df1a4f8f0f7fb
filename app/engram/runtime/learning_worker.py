"""The learning worker: extraction passes on their own thread, after the reply (W2, W5),
and the recent-conversation digest line once a conversation has gone quiet (M4)."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from datetime import timedelta

from engram.engine.extraction import Extractor
from engram.model.conversation import ConversationInfo
from engram.model.ids import ConversationId, PersonId
from engram.runtime import digests
from engram.runtime.extraction import PassReport, learn_person, pending
from engram.runtime.learning_policy import HostPolicy, learning_allowed
from engram.store import conversation_log, people, projection_state
from engram.store.store import Store

log = logging.getLogger(__name__)

REPORTS_KEPT = 200  # a worker remembers its latest passes (ids and reasons, never text)
DIGEST_POLL_SECONDS = 60.0  # how often the worker looks for conversations gone quiet (M4)


class LearningWorker:
    """Runs extraction passes on its own thread, so a reply never waits for learning (W2).

    The host calls `after_turn(conversation)` once a turn has committed; the worker learns
    for every participant of that conversation, one person at a time (W5). A server calls
    `catch_up()` when it starts, for what an earlier run left pending, and `close()` when
    it stops: what is queued then is finished, or — past the deadline — left alone. Either
    way nothing is lost: a pass writes its notes and its checkpoint in one transaction, so
    a pass cut short wrote nothing and its turns are still pending for the next run.
    """

    def __init__(
        self,
        store: Store,
        extractor: Extractor,
        host: HostPolicy = HostPolicy(),
        quiet_after: timedelta = digests.QUIET_AFTER,
        poll_seconds: float = DIGEST_POLL_SECONDS,
    ):
        self.store, self.extractor, self.host = store, extractor, host
        self.quiet_after, self.poll_seconds = quiet_after, poll_seconds
        # M4: conversations this worker learned from that have no digest line yet; each
        # gets one once it has been quiet for `quiet_after` (checked every poll).
        self._awaiting_digest: set[tuple[PersonId, ConversationId]] = set()
        self.digest_reports: deque[digests.DigestReport] = deque(maxlen=REPORTS_KEPT)
        self._queue: queue.Queue[tuple[PersonId, ConversationId | None] | None] = queue.Queue()
        self._queued: set[tuple[PersonId, ConversationId | None]] = set()
        self._guard = threading.Lock()
        self._give_up_at: float | None = None
        self.reports: deque[PassReport] = deque(maxlen=REPORTS_KEPT)
        self._thread = threading.Thread(target=self._loop, name="engram-learning", daemon=True)
        self._thread.start()

    def after_turn(self, info: ConversationInfo) -> None:
        """Queue learning for the conversation's participants; returns at once."""
        for person in info.participants:
            self._put((person, info.id))

    def catch_up(self) -> int:
        """Queue every pass an earlier run left pending (turns committed but not analysed,
        which the checkpoint tells apart); returns how many conversations wait."""
        with self.store.read() as conn:
            everyone = people.all_ids(conn)
        waiting = 0
        for person in everyone:
            for work in pending(self.store, person, self.host):
                self._put((person, work.info.id))
                waiting += 1
        return waiting

    def _put(self, job: tuple[PersonId, ConversationId | None]) -> None:
        with self._guard:
            if job in self._queued:
                return  # a pass not started yet will see this turn too
            self._queued.add(job)
        self._queue.put(job)

    def drain(self) -> None:
        """Wait until everything queued so far has been learned (for tests and shutdown)."""
        self._queue.join()

    def close(self, wait_seconds: float | None = None) -> bool:
        """Stop the thread: finish what is queued, or — after `wait_seconds` — the pass
        under way only, leaving the rest pending. True when the thread has stopped."""
        if wait_seconds is not None:
            self._give_up_at = time.monotonic() + wait_seconds
        self._queue.put(None)
        self._thread.join(None if wait_seconds is None else wait_seconds + 1)
        return not self._thread.is_alive()

    def _loop(self) -> None:
        while True:
            try:
                job = self._queue.get(timeout=self.poll_seconds)
            except queue.Empty:
                self._digest_quiet()
                continue
            try:
                if job is None:
                    return
                with self._guard:
                    self._queued.discard(job)
                if self._give_up_at is not None and time.monotonic() > self._give_up_at:
                    continue  # shutting down: left pending, found again by catch_up
                person, conversation = job
                self.reports.extend(
                    learn_person(self.store, person, self.extractor, self.host, conversation)
                )
                if conversation is not None:
                    self._awaiting_digest.add((person, conversation))
            except Exception:  # a failed pass must not stop learning for everyone else
                log.exception("learning failed; its turns stay pending")
            finally:
                self._queue.task_done()

    def _digest_quiet(self) -> None:
        """M4: a digest line for each conversation learned from that has gone quiet."""
        for person, conversation in sorted(self._awaiting_digest):
            try:
                written = digests.write_digests(
                    self.store, person, self.extractor, self.host, self.quiet_after, conversation
                )
            except Exception:  # the next poll tries again; learning goes on meanwhile
                log.exception("the digest line for %s could not be written", conversation)
                continue
            self.digest_reports.extend(written)
            if any(r.written or r.skipped for r in written) or not self._still_due(
                person, conversation
            ):
                self._awaiting_digest.discard((person, conversation))

    def _still_due(self, person: PersonId, conversation: ConversationId) -> bool:
        """Whether the conversation may still get a line (not digested, still learnable)."""
        with self.store.read() as conn:
            if conversation in projection_state.digested_conversations(conn, person):
                return False
            info = conversation_log.get(conn, conversation)
            return info is not None and learning_allowed(self.store, conn, info, self.host)
