"""Verify run in a child process, so the inspector's window never waits on it (issue 17
item 8): walking every chain of a 100,000-note store allocates millions of objects, and
the collector's generation-2 passes over them, on a worker thread, held the interpreter
(and so the UI thread) for a second at a time.

The parent's side (`verify_in_child`) starts `python -m engram.control.verify_process` (or
the bundle's `engram` with CHILD_FLAG) and writes down its stdin, never on its command
line, what the child needs: where the store is, its store key, whether it was opened
read-only, the clock's offset, and what this process knows of the OS keyring's anchor.
The child opens the store read-only itself (SQLite `mode=ro`: it sees what the parent
commits and writes nothing to the database), runs `forensics.verify_store` exactly as the
window did, and streams progress and the report back. Cancel and lock kill it.

The OS keyring is the parent's alone: the child reads the anchor the parent read just
before, and an anchor verify writes back (a lagging checkpoint advanced) comes up the pipe
and the parent writes it, as `write_keyring` would have. The checkpoint file and this
computer's anchor are written by the child, under the checkpoint's file lock, as verify in
the parent would have.
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
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import IO, Any

from engram.control.verify_report import VerifyReport
from engram.model.clock import SystemClock
from engram.model.errors import EngramError, KeyUnavailable
from engram.model.progress import Progress
from engram.store.checkpoint import Anchor
from engram.store.keyring_access import KeyringAccess
from engram.store.read_only_engine import engine_seeing_commits
from engram.store.store import Store

CHILD_FLAG = "--engram-verify"
POLL_S = 0.05  # how often the parent looks at Cancel while the child is quiet


class VerifyFailed(EngramError):
    """The child that verifies stopped without a report."""


class VerifyStopped(EngramError):
    """Verify was cancelled: the child was killed."""


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


def _command() -> list[str]:
    if getattr(sys, "frozen", False):
        return [sys.executable, CHILD_FLAG]
    return [sys.executable, "-m", "engram.control.verify_process"]


def _request(store: Store) -> Request:
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


def verify_in_child(
    store: Store,
    progress: Progress | None = None,
    cancelled: Any = None,
    started: Any = None,
) -> VerifyReport:
    """`forensics.verify_store(store, progress, cancelled)`, run by a child process.
    VerifyStopped when `cancelled` says stop (the child killed at once); VerifyFailed when
    the child fails. `started` is told the child's pid."""
    stop = cancelled or (lambda: False)
    request = pickle.dumps(_request(store), protocol=pickle.HIGHEST_PROTOCOL)
    with tempfile.TemporaryFile() as errors:
        try:
            child = subprocess.Popen(
                _command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                close_fds=True,
                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            )
        except OSError as error:
            raise VerifyFailed(f"Verify could not start ({error.strerror}).") from None
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
            report = _follow(store, messages, progress, stop)
        except BaseException:
            child.kill()
            raise
        finally:
            code = child.wait()
            reader.join()
            with contextlib.suppress(OSError):
                child.stdout.close()
        if report is None or code != 0:
            errors.seek(0)
            said = errors.read().decode("utf-8", "replace").strip().splitlines()
            raise VerifyFailed(
                "Verify could not finish (the verifying process stopped"
                f"{': ' + said[-1] if said else f' with code {code}'})."
            )
        return report


def _read(out: IO[bytes], into: queue.Queue[tuple[str, Any]]) -> None:
    """The child's messages, as they come; ("end", None) when it closes its end."""
    # Only the child writes this pipe: what is unpickled is what it pickled.
    with contextlib.suppress(EOFError, OSError, pickle.UnpicklingError):
        while True:
            into.put(pickle.load(out))
    into.put(("end", None))


def _follow(
    store: Store,
    messages: queue.Queue[tuple[str, Any]],
    progress: Progress | None,
    stop: Any,
) -> VerifyReport | None:
    report: VerifyReport | None = None
    while True:
        if stop():
            raise VerifyStopped("Verify was cancelled.")
        try:
            kind, value = messages.get(timeout=POLL_S)
        except queue.Empty:
            continue
        if kind == "progress" and progress is not None:
            progress(*value)
        elif kind == "keyring":  # verify advanced the checkpoint: the anchor beside the key
            store.anchors.write_keyring(Anchor.from_text(value))
        elif kind == "failed":
            raise VerifyFailed(str(value))
        elif kind == "report":
            report = value
        elif kind == "end":
            return report


# ---- the child ---------------------------------------------------------------------------


class ParentsKeyring(KeyringAccess):
    """The OS keyring as the parent saw it: the anchor it read; what verify writes is sent
    up to the parent, which writes it."""

    def __init__(self, request: Request, send: Any) -> None:
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
        raise KeyUnavailable("the verifying process does not write keys")

    def delete(self, store_id: str) -> None:
        raise KeyUnavailable("the verifying process does not delete keys")


class ShiftedClock(SystemClock):
    """The parent's clock: the system's, shifted as the parent's is."""

    def __init__(self, shift_us: int) -> None:
        self._shift = timedelta(microseconds=shift_us)

    def now(self) -> datetime:
        return super().now() + self._shift


def _engine(request: Request) -> Any:
    """Read-only: `mode=ro` sees every commit the parent makes (unlike `immutable`)."""
    return engine_seeing_commits(request.url, request.read_only)


def child_main(source: IO[bytes] | None = None, sink: IO[bytes] | None = None) -> int:
    """Be the child: read the request, verify, write progress and the report."""
    from engram.control import forensics
    from engram.store.store_info import read_info

    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)  # on a busy machine the window's own thread should win the CPU
    stdin = source or sys.stdin.buffer
    stdout = sink or sys.stdout.buffer
    lock = threading.Lock()

    def send(message: tuple[str, Any]) -> None:
        with lock:
            stdout.write(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
            stdout.flush()

    request: Request = pickle.load(stdin)  # only the parent writes this pipe
    engine = _engine(request)
    try:
        info = read_info(engine, request.url)
        keyring = ParentsKeyring(request, send)
        store = Store(
            request.url,
            engine,
            info,
            request.kek,
            ShiftedClock(request.clock_shift_us),
            keyring,
            read_only=request.read_only,
        )
        store.anchors.use_keyring = request.in_keyring
        store.anchors.keyring_failed = request.keyring_failed
        store.anchors.keyring_unasked = request.keyring_unasked
        report = forensics.verify_store(
            store, lambda done, total: send(("progress", (done, total))), lambda: False
        )
    except EngramError as error:
        send(("failed", str(error)))
        return 0
    finally:
        engine.dispose()
    send(("report", report))
    return 0


def run_child(argv: list[str]) -> None:
    """The frozen bundle's hook: be the child when started with CHILD_FLAG."""
    if argv[1:2] == [CHILD_FLAG]:
        sys.exit(child_main())


if __name__ == "__main__":
    sys.exit(child_main())
