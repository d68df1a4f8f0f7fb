"""Asking every Engram process that has a store open to let go of old snapshots.

An erasure is only finished when SQLite can copy its zeroed pages into the database file
and empty the WAL; a read transaction that began before the erasure (an open inspector,
an export, a verify) pins the old pages until it ends. The erasing process posts a request
beside the store (`<store>.release`, holding only a time); every other Engram process
notices it at its next statement (and the inspector on a timer) and ends any read that
began before it, drops its cached keys and decrypted text, and closes its idle connections.
Programs that are not Engram (a backup, the sqlite3 shell) do not know this file; for them
the erasure says so and stays pending until they close.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, event

from engram.model.errors import StoreReleased
from engram.store.owner_only import open_private

REQUEST_SUFFIX = ".release"
CHECK_EVERY_S = 0.05  # how stale a statement's view of the request file may be

RELEASED_MESSAGE = (
    "Another Engram process is finishing an erasure in this store, so this read was stopped "
    "to let it; try again."
)


class ReleaseRequests:
    """The request file of one store: post, withdraw and notice requests."""

    def __init__(self, db_path: Path | None) -> None:
        self.path = None if db_path is None else db_path.with_name(db_path.name + REQUEST_SUFFIX)
        self._checked = 0.0
        self._latest = 0.0
        self._handled = 0.0
        self._exempt = threading.local()

    @contextlib.contextmanager
    def exempt(self) -> Iterator[None]:
        """Reads this thread makes meanwhile are not stopped by a request: an erasure that
        committed finishes its own work (two erasing at once must not stop each other)."""
        depth = getattr(self._exempt, "depth", 0)
        self._exempt.depth = depth + 1
        try:
            yield
        finally:
            self._exempt.depth = depth

    @property
    def exempted(self) -> bool:
        """Whether this thread is inside `exempt`."""
        return bool(getattr(self._exempt, "depth", 0))

    def post(self) -> float:
        """Ask every Engram process to let go; returns the request's time. This process
        does not take its own request for another's: its other threads' reads that began
        before it are still stopped (`end_old_reads`), but it drops nothing and runs no
        release callback (the inspector would say another program erased data)."""
        at = time.time()
        self._handled = max(self._handled, at)
        if self.path is None:
            return at
        temporary = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        fd = open_private(temporary, os.O_WRONLY | os.O_TRUNC)  # owner-only, as every file
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"at": at}))
        os.replace(temporary, self.path)
        return at

    def withdraw(self, at: float) -> None:
        """Take back the request posted at `at` (a newer one, from someone else, stays)."""
        if self.path is not None and self._read() == at:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def _read(self) -> float:
        if self.path is None:
            return 0.0
        try:
            return float(json.loads(self.path.read_text("utf-8"))["at"])
        except (OSError, ValueError, KeyError, TypeError):
            return 0.0

    def latest(self, *, force: bool = False) -> float:
        """The time of the request now posted (0 if none); read at most every CHECK_EVERY_S."""
        now = time.monotonic()
        if force or now - self._checked >= CHECK_EVERY_S:
            self._checked = now
            try:
                exists = self.path is not None and self.path.exists()
            except OSError:
                exists = False
            self._latest = self._read() if exists else 0.0
        return self._latest

    def take_new(self, *, force: bool = False) -> float | None:
        """A request not handled yet by this process (and mark it handled), else None."""
        at = self.latest(force=force)
        if at and at > self._handled:
            self._handled = at
            return at
        return None


def end_old_reads(
    engine: Engine, requests: ReleaseRequests, on_request: Callable[[], None]
) -> None:
    """Make every read transaction on `engine` stop at its next statement once a request
    newer than its start is posted; `on_request` runs once per new request."""

    @event.listens_for(engine, "begin")
    def _began(connection: Any) -> None:
        connection.info["began_at"] = time.time()

    @event.listens_for(engine, "commit")
    @event.listens_for(engine, "rollback")
    def _ended(connection: Any) -> None:
        connection.info.pop("began_at", None)

    @event.listens_for(engine, "before_cursor_execute")
    def _check(connection: Any, *_: Any) -> None:
        at = requests.latest()
        if not at:
            return
        if requests.take_new():
            on_request()
        began = connection.info.get("began_at")
        writing = connection.get_execution_options().get("write")
        if began is not None and began < at and not writing and not requests.exempted:
            raise StoreReleased(RELEASED_MESSAGE)
