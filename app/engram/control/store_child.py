"""Long reads of a store done by a child process, so the inspector's window never waits on
them (issue 17 item 8): on 100,000 notes a walk or a report allocates millions of objects,
and a worker thread doing that work in the window's process holds the interpreter (and so
the UI thread) in pieces of tens of milliseconds at a time, and for a second at a time
when the collector walks them. Verify (control/verify_process.py) and the access report
(control/report_printing.py) run this way.

The parent (`run_child`) starts the child and writes down its stdin, never on its command
line, what it needs: where the store is, its store key, whether it was opened read-only,
the clock's offset and what this process knows of the OS keyring's anchor (`Request`),
then the job's own request. The child (`child_store`) opens the store read-only itself
(SQLite `mode=ro`: it sees what the parent commits and writes nothing to the database),
does the job and sends pickled messages up its stdout: ("progress", (done, total)), the
job's own, ("failed", sentence) or ("keyring", anchor text). Cancel kills it.

The OS keyring is the parent's alone: the child reads the anchor the parent read just
before, and an anchor the child would write (verify advancing a lagging checkpoint) comes
up the pipe and the parent writes it.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import IO, Any

from engram.model.clock import SystemClock
from engram.model.errors import EngramError, KeyUnavailable
from engram.model.progress import Progress
from engram.store.checkpoint import Anchor
from engram.store.keyring_access import KeyringAccess
from engram.store.read_only_engine import engine_seeing_commits
from engram.store.store import Store

POLL_S = 0.05  # how often the parent looks at Cancel while the child is quiet

Send = Callable[[tuple[str, Any]], None]


class ChildStopped(EngramError):
    """The job was cancelled: the child was killed."""


@dataclass(frozen=True, slots=True)
class Request:
    """What the child needs to open the store as the parent has it (sent down stdin)."""

    url: str
    kek: bytes
    read_only: bool
    clock_shift_us: int  # the parent's clock minus the system clock (a test's fixed clock)
    in_keyring: bool
    keyring_user: str
    keyring_text: str | None  # the anchor the parent read there
    keyring_error: str | None  # or why it could not be read
    keyring_failed: str | None
    keyring_unasked: str | None


def request_for(store: Store) -> Request:
    """How the child opens `store` as this process has it open."""
    anchors = store.anchors
    in_keyring = anchors.in_keyring()
    text: str | None = None
    error: str | None = None
    if in_keyring:
        try:
            text = anchors.keyring.get_text(anchors.keyring_user)
        except KeyUnavailable as failed:
            error = str(failed)
    shift = store.now() - datetime.now(store.now().tzinfo)
    return Request(
        url=store.url,
        kek=store.keys.kek,
        read_only=store.read_only,
        clock_shift_us=int(shift / timedelta(microseconds=1)),
        in_keyring=in_keyring,
        keyring_user=anchors.keyring_user,
        keyring_text=text,
        keyring_error=error,
        keyring_failed=anchors.keyring_failed,
        keyring_unasked=anchors.keyring_unasked,
    )


def run_child(
    store: Store,
    command: list[str],
    job: object,
    handle: Callable[[str, Any], None],
    *,
    what: str,
    failure: type[EngramError],
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    started: Callable[[int], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """Start `command`, send it the store's Request and `job`, and follow its messages
    until it closes its end: progress to `progress`, anchors to the keyring, every other
    message to `handle(kind, value)`. ChildStopped when `cancelled` says stop (the child
    killed at once); `failure` with one sentence when the child fails or stops with an
    error (`what` names the job: "Verify", "The access report"). `started` is told the
    child's pid."""
    stop = cancelled or (lambda: False)
    request = pickle.dumps((request_for(store), job), protocol=pickle.HIGHEST_PROTOCOL)
    with tempfile.TemporaryFile() as errors:
        try:
            child = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                close_fds=True,
                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})},
            )
        except OSError as error:
            raise failure(f"{what} could not start ({error.strerror}).") from None
        assert child.stdin is not None and child.stdout is not None
        if started is not None:
            started(child.pid)
        messages: queue.Queue[tuple[str, Any]] = queue.Queue()
        reader = threading.Thread(target=_read, args=(child.stdout, messages), daemon=True)
        reader.start()
        try:
            with contextlib.suppress(BrokenPipeError):
                child.stdin.write(request)
                child.stdin.close()
            ended = _follow(store, messages, handle, failure, progress, stop)
        except BaseException:
            child.kill()
            raise
        finally:
            code = child.wait()
            reader.join()
            with contextlib.suppress(OSError):
                child.stdout.close()
        if not ended or code != 0:
            errors.seek(0)
            said = errors.read().decode("utf-8", "replace").strip().splitlines()
            raise failure(
                f"{what} could not finish (its process stopped"
                f"{': ' + said[-1] if said else f' with code {code}'})."
            )


def _read(out: IO[bytes], into: queue.Queue[tuple[str, Any]]) -> None:
    """The child's messages, as they come; ("closed", None) when it closes its end."""
    # Only the child writes this pipe: what is unpickled is what it pickled.
    with contextlib.suppress(EOFError, OSError, pickle.UnpicklingError):
        while True:
            into.put(pickle.load(out))
    into.put(("closed", None))


def _follow(
    store: Store,
    messages: queue.Queue[tuple[str, Any]],
    handle: Callable[[str, Any], None],
    failure: type[EngramError],
    progress: Progress | None,
    stop: Callable[[], bool],
) -> bool:
    """Follow the child until it closes its end; whether it said it had finished."""
    ended = False
    while True:
        if stop():
            raise ChildStopped("Cancelled.")
        try:
            kind, value = messages.get(timeout=POLL_S)
        except queue.Empty:
            continue
        if kind == "progress":
            if progress is not None:
                progress(*value)
        elif kind == "keyring":  # the child advanced the checkpoint: the anchor beside the key
            store.anchors.write_keyring(Anchor.from_text(value))
        elif kind == "failed":
            raise failure(str(value))
        elif kind == "ended":
            ended = True
        elif kind == "closed":
            return ended
        else:
            handle(kind, value)


# ---- the child ---------------------------------------------------------------------------


class ParentsKeyring(KeyringAccess):
    """The OS keyring as the parent saw it: the anchor it read; what the child would write
    is sent up to the parent, which writes it."""

    def __init__(self, request: Request, send: Send) -> None:
        super().__init__()
        self._request = request
        self._send = send

    def usable_backend(self) -> str | None:
        return "the parent's" if self._request.in_keyring else None

    def get_text(self, user: str) -> str | None:
        if user != self._request.keyring_user:
            return None
        if self._request.keyring_error is not None:
            raise KeyUnavailable(self._request.keyring_error)
        return self._request.keyring_text

    def set_text(self, user: str, text: str) -> None:
        if user == self._request.keyring_user:
            self._send(("keyring", text))

    def get(self, store_id: str) -> bytes | None:
        return None

    def set(self, store_id: str, key: bytes) -> None:
        raise KeyUnavailable("a reading process does not write keys")

    def delete(self, store_id: str) -> None:
        raise KeyUnavailable("a reading process does not delete keys")


class ShiftedClock(SystemClock):
    """The parent's clock: the system's, shifted as the parent's is."""

    def __init__(self, shift_us: int) -> None:
        self._shift = timedelta(microseconds=shift_us)

    def now(self) -> datetime:
        return super().now() + self._shift


class Channel:
    """The child's end: pickled messages up its stdout, one at a time."""

    def __init__(self, sink: IO[bytes]) -> None:
        self._sink = sink
        self._lock = threading.Lock()

    def send(self, message: tuple[str, Any]) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            self._sink.write(data)
            self._sink.flush()


def serve_child(
    work: Callable[[Store, Any, Channel], None],
    source: IO[bytes] | None = None,
    sink: IO[bytes] | None = None,
) -> int:
    """Be the child: read the request, open the store read-only as the parent has it, and
    do `work(store, job, channel)`. An EngramError is sent up as ("failed", sentence);
    ("ended", None) is sent when the work is done. The exit code (0: said either way)."""
    from engram.store.store_info import read_info

    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)  # on a busy machine the window's own thread should win the CPU
    channel = Channel(sink or sys.stdout.buffer)
    # Only the parent writes this pipe: what is unpickled is what it pickled.
    request, job = pickle.load(source or sys.stdin.buffer)
    engine = engine_seeing_commits(request.url, request.read_only)
    try:
        store = Store(
            request.url,
            engine,
            read_info(engine, request.url),
            request.kek,
            ShiftedClock(request.clock_shift_us),
            ParentsKeyring(request, channel.send),
            read_only=request.read_only,
        )
        store.anchors.use_keyring = request.in_keyring
        store.anchors.keyring_failed = request.keyring_failed
        store.anchors.keyring_unasked = request.keyring_unasked
        work(store, job, channel)
    except EngramError as error:
        channel.send(("failed", str(error)))
        return 0
    finally:
        engine.dispose()
    channel.send(("ended", None))
    return 0
