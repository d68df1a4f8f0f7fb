"""The erasure's raw file scan, run in a child process that holds no connection to the store.

POSIX advisory locks belong to a process, and closing *any* descriptor of a file releases
all of that process's locks on it (SQLite's "How To Corrupt An SQLite Database File",
§2.2). A process that holds the store open must therefore never open and close the store's
files itself: the next Engram process to close its last connection would think it is alone,
checkpoint, and delete the WAL the first one is still writing through. So the scan runs in
a child process (`python -m engram.store.file_scan`, or the bundle's `engram` with
`CHILD_FLAG`): its descriptors and locks are its own, and it is given none of ours.

What it proves: no fragment of 31 bytes or more of any erased ciphertext is anywhere in the
database file, its WAL, its shared memory or its rollback journal. Every 24-byte window of
every ciphertext (stride 1) is looked up against the files' 24-byte windows at stride 8; a
fragment of `WINDOW + STRIDE - 1` bytes always holds one file window whole. Random bytes
never match 24 bytes by chance.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from engram.model.progress import Progress
from engram.store import child_process

WINDOW = 24
STRIDE = 8
SMALLEST_FOUND = WINDOW + STRIDE - 1
SUFFIXES = ("", "-wal", "-shm", "-journal")
CHILD_FLAG = "--engram-file-scan"  # how a frozen bundle's executable is told to be the child
CHUNK = 1 << 20  # bytes of a file held at once
WINDOWS_PER_PASS = 400_000  # about 40 MB of lookup table; more ciphertext takes more passes
_LENGTH = struct.Struct(">I")


class ScanFailed(Exception):
    """The child could not scan (it could not start, or a file could not be read)."""


def store_files(path: Path) -> list[Path]:
    """The database and the side files SQLite keeps beside it, those that exist."""
    found = []
    for suffix in SUFFIXES:
        candidate = path.with_name(path.name + suffix)
        try:
            if candidate.is_file():  # a stat, never an open
                found.append(candidate)
        except OSError:
            continue
    return found


def child_command() -> list[str]:
    """How to start the child: this interpreter with the module, or the frozen bundle."""
    return child_process.child_command("engram.store.file_scan", CHILD_FLAG)


def unscanned(note: str | None = None, error: str | None = None) -> dict[str, Any]:
    """A scan's result with every key a scan has, when there was none (a server database
    has no file; the child failed): every report has one shape on every backend."""
    return {
        "scanned": [],
        "looked_for": 0,
        "ciphertext_bytes": 0,
        "found": 0,
        "method": None,
        "note": note,
        "error": error,
    }


def scan(path: Path, needles: Iterable[bytes], progress: Progress | None = None) -> dict[str, Any]:
    """Scan the store at `path` for every window of every needle, in a child process.
    Returns {"scanned", "looked_for", "ciphertext_bytes", "found", "method"}; `found` counts
    the needles of which a fragment remains. ScanFailed when the child could not finish."""
    wanted = [bytes(n) for n in needles if len(n) >= WINDOW]
    files = store_files(path)
    request = json.dumps({"files": [str(f) for f in files]}).encode() + b"\n"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        child = subprocess.Popen(
            child_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            close_fds=True,
            env=env,
        )
    except OSError as error:
        raise ScanFailed(f"the file scan could not start ({error.strerror})") from None
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write(
            request + b"".join(_LENGTH.pack(len(needle)) + needle for needle in wanted)
        )
        child.stdin.close()
    except BrokenPipeError:
        pass  # the child died early; its exit status says so below
    result: dict[str, Any] | None = None
    for line in child.stdout:
        message = json.loads(line)
        if "done" in message and progress is not None:
            progress(int(message["done"]), int(message["total"]))
        if "result" in message:
            result = message["result"]
    child.stdout.close()
    errors = child.stderr.read().decode("utf-8", "replace") if child.stderr else ""
    if child.wait() != 0 or result is None:
        last = errors.strip().splitlines()[-1:] or ["it ended without an answer"]
        raise ScanFailed(f"the file scan failed: {last[0]}")
    return {
        **unscanned(),
        "scanned": [f.name for f in files],
        "looked_for": len(wanted),
        "ciphertext_bytes": sum(len(n) for n in wanted),
        "found": int(result["found"]),
        "method": (
            f"every {WINDOW}-byte window of each erased ciphertext, looked for at every "
            f"{STRIDE}th byte of each file (any fragment of {SMALLEST_FOUND} bytes or more "
            "is found), read by a separate process"
        ),
    }


# ---- the child ---------------------------------------------------------------------------


def _read_needles(stream: IO[bytes]) -> list[bytes]:
    needles = []
    while header := stream.read(_LENGTH.size):
        (length,) = _LENGTH.unpack(header)
        needles.append(stream.read(length))
    return needles


Piece = tuple[int, bytes]  # a needle's index, and the needle or a piece of it


def _groups(needles: list[bytes]) -> Iterator[list[Piece]]:
    """The needles in groups of at most WINDOWS_PER_PASS windows (a long one in pieces
    that overlap by WINDOW - 1 bytes, so no window is lost)."""
    group: list[Piece] = []
    size = 0
    for index, needle in enumerate(needles):
        windows = len(needle) - WINDOW + 1
        start = 0
        while start < windows:
            take = min(windows - start, WINDOWS_PER_PASS - size)
            group.append((index, needle[start : start + take + WINDOW - 1]))
            size += take
            start += take
            if size >= WINDOWS_PER_PASS:
                yield group
                group, size = [], 0
    if group:
        yield group


def _table(group: list[Piece]) -> dict[bytes, int]:
    """Window -> needle index, for every window of the group."""
    table: dict[bytes, int] = {}
    for index, piece in group:
        for start in range(len(piece) - WINDOW + 1):
            table[piece[start : start + WINDOW]] = index
    return table


def _passes(needles: list[bytes]) -> Iterator[dict[bytes, int]]:
    """The lookup table of each group (what a pass looks for)."""
    for group in _groups(needles):
        yield _table(group)


def _words(group: list[Piece]) -> set[int]:
    """Every 8-byte word of the group's pieces at every offset, as the machine's 64-bit
    words (read in C, eight casts a piece): each window's first word is among them."""
    words: set[int] = set()
    for _, piece in group:
        view = memoryview(piece)
        for offset in range(STRIDE):
            end = offset + (len(piece) - offset) // STRIDE * STRIDE
            words.update(view[offset:end].cast("Q"))
    return words


_SLICES = [slice(i, i + WINDOW) for i in range(0, CHUNK + 32 - WINDOW + 1, STRIDE)]


def _chunks(path: Path) -> Iterator[bytes]:
    """The file in CHUNK pieces, each starting with the previous one's last 32 bytes (a
    multiple of STRIDE, so windows keep the file's alignment and none is missed)."""
    carry = b""
    with open(path, "rb") as handle:
        while block := handle.read(CHUNK):
            chunk = carry + block
            yield chunk
            carry = chunk[-32:] if len(chunk) >= 32 else b""


def _found_in(
    path: Path, group: list[Piece], words: set[int], table: dict[bytes, int], hits: set[int]
) -> None:
    for chunk in _chunks(path):
        # A file window that is a needle's starts, at a multiple of STRIDE (8: one 64-bit
        # word), with one of the needles' words: the file's aligned words, read in C
        # without a slice each, rule out nearly every chunk (random words never meet by
        # chance), and the exact table is built only for a chunk they do not.
        aligned = memoryview(chunk)[: len(chunk) - len(chunk) % STRIDE].cast("Q")
        if words.isdisjoint(aligned):
            continue  # the usual case
        if not table:
            table.update(_table(group))
        windows = _SLICES[: max(0, (len(chunk) - WINDOW) // STRIDE + 1)]
        for window in windows:
            index = table.get(chunk[window])
            if index is not None:
                hits.add(index)


def child_main(stdin: IO[bytes] | None = None, stdout: IO[str] | None = None) -> int:
    """Read the request and needles from stdin, write progress and the result to stdout."""
    source = stdin or sys.stdin.buffer
    sink = stdout or sys.stdout
    request = json.loads(source.readline())
    needles = _read_needles(source)
    files = [Path(f) for f in request["files"]]
    hits: set[int] = set()
    groups = list(_groups(needles))
    total = max(1, len(groups) * len(files))
    done = 0

    def report(message: dict[str, Any]) -> None:
        sink.write(json.dumps(message) + "\n")
        sink.flush()

    for group in groups:
        words = _words(group)
        table: dict[bytes, int] = {}  # built when a chunk holds one of the words
        for path in files:
            if path.exists():
                _found_in(path, group, words, table, hits)
            done += 1
            report({"done": done, "total": total})
    report({"result": {"found": len(hits)}})
    return 0


def run_child(argv: list[str]) -> None:
    """The frozen bundle's hook: be the child when started with CHILD_FLAG."""
    child_process.become_child(argv, CHILD_FLAG, child_main)


if __name__ == "__main__":
    sys.exit(child_main())
