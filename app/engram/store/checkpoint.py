"""A signed checkpoint of every chain's length and head, kept outside the database.

Swapping in an older copy of the store (rollback) leaves the database behind the checkpoint,
which `verify` reports. The file sits beside a SQLite store (`<store>.checkpoint`, so a copy
for offline review can carry it) or, for server URLs, in the user data folder. Chains are
named in it only by keyed hash (`Store.hidden_name`), so the file names nobody — not even
a person whose erase was cut short by a crash.

The file is a journal (checkpoint_format.py): a signed base, then one signed line per write
with only the chains that write touched, its serial and the previous line's digest. So a
write costs the same however large the store is; when the file grows past a few times its
base, the next write folds it into a fresh base (compaction).

Rules that keep it honest:
- Only creating a store and `engram checkpoint reanchor` start a checkpoint. A write that
  finds none does not make a new one, so a deleted checkpoint stays reported until someone
  re-anchors on purpose (a fresh one would hide the rollback it was deleted to hide).
- Every update holds the checkpoint's lock from just before the database commit until the
  file is written (`Store.write`), so lines land in commit order (a write that could not
  take the lock writes no line: it warns, and the checkpoint lags); and a chain already
  recorded as erased is never put back by a later line, unless the same write started it
  again (`checkpoint_format.merge`, applied when the lines are read).
- A damaged line is never papered over: a write that finds one sets the file aside (verify
  keeps saying so) rather than folding it into a new base.
- A write that finds the last line cut short (a writer killed mid-line) drops that part:
  the checkpoint lags, which verify advances; it never reads as damage.
- Each line raises the serial number; anchors elsewhere (the user data folder, the OS
  keyring) keep the latest serial and digest, so an older copy of the store *with* its own
  older checkpoint is caught too (`checkpoint_anchor`).
- After the database commit nothing here may fail the write: `Store.write` turns a failure
  into a warning (the checkpoint lags; verify advances it).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import filelock

from engram.store import owner_only
from engram.store.checkpoint_format import (
    Anchor,
    Checkpoint,
    CheckpointDamaged,
    Step,
    decode_legacy,
    decode_line,
    encode_base,
    encode_step,
    is_legacy,
    merge,
)
from engram.store.crypto import Signer, Verifier

__all__ = ["Anchor", "Checkpoint", "CheckpointDamaged", "CheckpointFile"]

# Compact when the file would pass this many times its base (and this many bytes): the
# fold at compaction then costs, spread over the writes since the last one, a constant.
COMPACT_FACTOR = 4
COMPACT_FLOOR = 16 * 1024


@dataclass(frozen=True)
class _Tail:
    """What a writer needs of the file without reading all of it."""

    serial: int
    digest: bytes
    base_size: int
    complete: int  # bytes up to the end of the last whole line
    size: int
    legacy: bool = False


class CheckpointFile:
    """Reads, appends to, compacts and starts the checkpoint file."""

    def __init__(
        self, path: Path, store_id: str, verify_key: bytes, hide: Callable[[str], str]
    ) -> None:
        self.path = path
        self.store_id = store_id
        self.verifier = Verifier(verify_key)
        self.hide = hide
        self._held = threading.local()
        self._swept = False

    @property
    def damaged_path(self) -> Path:
        """Where a damaged checkpoint is kept for whoever investigates."""
        return self._beside(".damaged")

    @property
    def lock_path(self) -> Path:
        """The lock every writer of this checkpoint holds."""
        return self._beside(".lock")

    def _beside(self, suffix: str) -> Path:
        return self.path.with_name(self.path.name + suffix)

    # ---- reading ----------------------------------------------------------------------

    def read(self) -> Checkpoint | None:
        """The checkpoint, None if absent; CheckpointDamaged (a ValueError) if any line is
        unreadable, changed, out of order or badly signed."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise CheckpointDamaged(f"it cannot be read ({error.strerror})") from None
        return self._parse(raw)

    def _parse(self, raw: bytes) -> Checkpoint:
        lines = raw.split(b"\n")
        if raw.endswith(b"\n"):
            lines.pop()
        elif len(lines) > 1:
            lines.pop()  # the last line was cut short by a crash: the checkpoint lags
        elif is_legacy(raw):
            return decode_legacy(raw, self.store_id, self.verifier, self.hide)
        else:
            raise CheckpointDamaged("it was cut short" if raw else "it is empty")
        base = decode_line(lines[0], self.store_id, self.verifier, base=True)
        checkpoint = Checkpoint(self.store_id, serial=base.serial, digest=base.digest)
        merge(checkpoint, base.step)
        base_size = len(lines[0]) + 1
        for number, raw_line in enumerate(lines[1:], start=2):
            line = decode_line(raw_line, self.store_id, self.verifier, base=False)
            if (
                line.prev != checkpoint.digest
                or line.serial != checkpoint.serial + 1
                or line.base_size != base_size
            ):
                raise CheckpointDamaged(f"its line {number} does not follow the one before it")
            merge(checkpoint, line.step)
            checkpoint.serial, checkpoint.digest = line.serial, line.digest
        return checkpoint

    def _tail(self, fd: int) -> _Tail:
        """The last whole line, read backwards from the end (a step's length, not the
        file's); CheckpointDamaged if it is not a line this store signed."""
        size = os.fstat(fd).st_size
        chunk, buffer, start = 4096, b"", size
        while True:
            start = max(0, start - chunk)
            buffer = os.pread(fd, size - start - len(buffer), start) + buffer
            if buffer.count(b"\n") >= 2 or start == 0:
                break
            chunk *= 2
        end = buffer.rfind(b"\n")
        if end < 0:  # one line and no newline: the old format, or a cut-short base
            return _Tail(0, b"", 0, 0, size, legacy=True)
        complete = start + end + 1
        line_start = buffer.rfind(b"\n", 0, end) + 1  # 0 when the base is the last line
        raw_line = buffer[line_start:end]
        is_base = start + line_start == 0
        if is_base and is_legacy(raw_line):
            return _Tail(0, b"", 0, complete, size, legacy=True)
        line = decode_line(raw_line, self.store_id, self.verifier, base=is_base)
        base_size = complete if is_base else line.base_size
        return _Tail(line.serial, line.digest, base_size, complete, size)

    # ---- writing ----------------------------------------------------------------------

    def update(
        self,
        signer: Signer,
        heads: Mapping[str, tuple[int, bytes]],
        gone: Iterable[str] = (),
        revived: Iterable[str] = (),
    ) -> Anchor | None:
        """Record one write: new heads (by chain id; longest wins), the keyed hashes of
        chains it erased and of chains it started (again). Returns the new anchor, or None
        when there is no checkpoint to update (never re-created here)."""
        step = Step(
            {self.hide(chain): head for chain, head in heads.items()},
            frozenset(gone),
            frozenset(revived),
        )
        with self.locked():
            self._sweep()
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CLOEXEC)
            except FileNotFoundError:
                return None
            try:
                try:
                    tail = self._tail(fd)
                except CheckpointDamaged:
                    return self._set_aside_and_restart(step, signer)
                line, line_digest = encode_step(
                    self.store_id, tail.serial + 1, tail.digest, tail.base_size, step, signer
                )
                limit = max(COMPACT_FACTOR * tail.base_size, COMPACT_FLOOR)
                if tail.legacy or tail.complete + len(line) > limit:
                    return self._compact(step, signer)
                if tail.complete != tail.size:
                    os.ftruncate(fd, tail.complete)  # drop a line a killed writer cut short
                _write_all(fd, line, tail.complete)
                os.fsync(fd)
                return Anchor(tail.serial + 1, line_digest)
            finally:
                os.close(fd)

    def _compact(self, step: Step, signer: Signer) -> Anchor | None:
        """Fold every line and this write into a fresh base (every line checked first)."""
        try:
            current = self.read()
        except CheckpointDamaged:
            return self._set_aside_and_restart(step, signer)
        if current is None:  # deleted by hand since the tail was read: never re-created
            return None
        merge(current, step)
        current.serial += 1
        return self._write_base(current, signer)

    def _set_aside_and_restart(self, step: Step, signer: Signer) -> Anchor:
        # Never paper over a damaged checkpoint: set it aside (verify keeps saying so, since
        # a rollback before now can no longer be ruled out) and start anew.
        if not self.damaged_path.exists():
            os.replace(self.path, self.damaged_path)
        fresh = Checkpoint(self.store_id, serial=1)
        merge(fresh, step)
        return self._write_base(fresh, signer)

    def start(
        self,
        signer: Signer,
        heads: Mapping[str, tuple[int, bytes]],
        gone: set[str],
        *,
        after_serial: int = 0,
    ) -> Anchor:
        """Write a new checkpoint from scratch (a new store, or a deliberate re-anchor), with
        a serial above every one seen before so no anchor takes it for an older copy."""
        with self.locked():
            previous = 0
            with contextlib.suppress(OSError, CheckpointDamaged):
                previous = self._latest_serial()
            checkpoint = Checkpoint(
                self.store_id,
                {self.hide(chain): head for chain, head in heads.items()},
                set(gone),
                max(after_serial, previous) + 1,
            )
            return self._write_base(checkpoint, signer)

    def _latest_serial(self) -> int:
        fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            tail = self._tail(fd)
        finally:
            os.close(fd)
        if tail.legacy:
            old = self.read()
            return old.serial if old else 0
        return tail.serial

    def _write_base(self, checkpoint: Checkpoint, signer: Signer) -> Anchor:
        line, line_digest = encode_base(checkpoint, signer)
        temporary = self._beside(".tmp")
        fd = owner_only.open_private(temporary, os.O_WRONLY | os.O_TRUNC)
        try:
            _write_all(fd, line, 0)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, self.path)
        return Anchor(checkpoint.serial, line_digest)

    def _sweep(self) -> None:
        """Once per session, under the lock (so no writer is at it now): remove the
        temporary base a writer killed mid-compaction left."""
        if not self._swept:
            self._swept = True
            self._beside(".tmp").unlink(missing_ok=True)

    # ---- lock and modes ---------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the checkpoint's lock (across processes and threads; re-entrant per thread).

        The operating system's lock through `filelock` (flock here, LockFileEx on Windows):
        each thread has its own descriptor, so threads of one process exclude each other too.
        The lock file stays in place (waiters share its inode) and is owner-only."""
        if getattr(self._held, "depth", 0):
            self._held.depth += 1
            try:
                yield
            finally:
                self._held.depth -= 1
            return
        owner_only.make_folders(self.path.parent)
        with self._file_lock:
            owner_only.tighten(self.lock_path)
            self._held.depth = 1
            try:
                yield
            finally:
                self._held.depth = 0

    @functools.cached_property
    def _file_lock(self) -> filelock.FileLock:
        return filelock.FileLock(
            self.lock_path,
            mode=owner_only.FILE_MODE,
            thread_local=True,
            poll_interval=0.002,  # a writer holds it for one commit: milliseconds
            fallback_to_soft=False,  # a lock file that a crash leaves would block every writer
            preserve_lock_file=True,
        )

    def tighten(self) -> None:
        """Owner-only: the checkpoint and the files beside it, where this user owns them."""
        for path in (self.path, self.lock_path, self.damaged_path):
            owner_only.tighten(path)


def _write_all(fd: int, data: bytes, offset: int) -> None:
    while data:
        written = os.pwrite(fd, data, offset)
        data, offset = data[written:], offset + written
