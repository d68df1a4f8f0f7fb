"""Finishing an erasure: its bytes must leave the database file and the WAL, not just the
tables. Until they have, a pending-erasure mark stays in the store; the erasing process,
and otherwise the next open, finishes it; verify reports it until then.

Finishing = rewriting every page from the live rows (VACUUM: a page the b-tree rebalanced
keeps stale copies of cells that moved, which `secure_delete` never sees), a WAL checkpoint
that copies the rewritten pages into the file and truncates the WAL (it cannot while any
reader holds a snapshot from before, so Engram processes are asked to let go: `release`),
then a scan of the files, from a child process, for every window of every erased
ciphertext (`file_scan`). Only a complete rewrite and checkpoint with nothing found clears
the mark. The finishing process's own reads are exempt from release requests, so two
erasures at once never stop each other after both committed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, exc, select

from engram.model.clock import from_micros, iso
from engram.model.errors import EngramError, ErasureIncomplete
from engram.model.progress import Progress
from engram.store import contexts, crypto, faults, file_scan
from engram.store.data_keys import KeyGone, erasure_mark_key_ref
from engram.store.dialect import after_erasure, rewrite_pages, sqlite_path
from engram.store.erasure_marks import P, unframe
from engram.store.file_scan import ScanFailed, unscanned
from engram.store.unlocked import UnlockedStore

DEFAULT_WAIT_S = 10.0  # how long an erasing command waits for other readers to let go
OPEN_WAIT_S = 1.0  # what an ordinary open spends on someone else's unfinished erasure
RETRY_S = 0.05
# What finishes an erasure whose bytes are still in the files, said the same way by verify
# and by the erasure report (control/erasure_report).
FINISH_ADVICE = (
    "close every other program that has this store open (an inspector, an export or a "
    "backup), then open the store again, which finishes the erasure"
)


@dataclass
class Finish:
    """What finishing the pending erasures found."""

    wal_checkpoint: str = "not applicable"
    page_rewrite: dict[str, Any] = field(default_factory=dict)
    frames: int = 0
    checkpointed: int = 0
    asked_others_to_let_go: bool = False
    raw_file_scan: dict[str, Any] = field(default_factory=dict)
    pending: list[int] = field(default_factory=list)

    @property
    def done(self) -> bool:
        """True when no erasure is left unfinished."""
        return not self.pending

    def reason(self) -> str:
        """Why it is not done, as the middle of a sentence."""
        if self.wal_checkpoint == "busy":
            return (
                "another program is still reading the store (an open inspector, an export "
                "or a backup), so the old pages could not be overwritten yet"
            )
        if self.page_rewrite.get("rewrite") == "failed":
            return f"its pages could not be rewritten yet ({self.page_rewrite['error']})"
        if self.raw_file_scan.get("error"):
            return f"{self.raw_file_scan['error']}, so nothing proves the bytes are gone yet"
        found = self.raw_file_scan.get("found", 0)
        return f"{found} pieces of erased ciphertext are still in the store's files"

    def to_json(self) -> dict[str, Any]:
        """As shown in an erasure report."""
        return {
            "wal_checkpoint": self.wal_checkpoint,
            "page_rewrite": self.page_rewrite,
            "frames": self.frames,
            "checkpointed": self.checkpointed,
            "asked_others_to_let_go": self.asked_others_to_let_go,
            "raw_file_scan": self.raw_file_scan,
            "pending_erasures": self.pending,
        }


def scan_files(
    store: UnlockedStore, needles: Iterable[bytes], progress: Progress | None = None
) -> dict[str, Any]:
    """Look for every window of each erased ciphertext in the database file, its WAL and
    its shared memory, from a child process (file_scan: this process must never open and
    close the files it holds SQLite locks on). `progress` follows the child's passes."""
    path = sqlite_path(store.url)
    if path is None:
        return file_scan.unscanned(note="not a file store; keys were destroyed")
    return file_scan.scan(path, needles, progress)


def _marks(store: UnlockedStore) -> dict[int, list[bytes]]:
    marks: dict[int, list[bytes]] = {}
    with store.read() as conn:
        rows = conn.execute(select(P.c.id, P.c.probes).order_by(P.c.id)).all()
        for record, sealed in rows:
            try:
                key = store.keys.data_key(conn, erasure_mark_key_ref(int(record)))
                blob = crypto.unseal(
                    key, bytes(sealed), contexts.erasure_probes(store.info.id, int(record))
                )
            except (KeyGone, crypto.SealBroken):
                blob = b""  # nothing left to look for; the checkpoint still has to happen
            marks[int(record)] = unframe(blob)
    return marks


def _rewrite(store: UnlockedStore, result: Finish) -> bool:
    try:
        result.page_rewrite = rewrite_pages(store.engine)
    except (exc.DBAPIError, OSError) as error:
        result.page_rewrite = {"rewrite": "failed", "error": str(getattr(error, "orig", error))}
    return result.page_rewrite.get("rewrite") == "complete"


def _checkpoint(store: UnlockedStore, wait_s: float, result: Finish) -> None:
    deadline = time.monotonic() + wait_s
    posted: float | None = None
    try:
        while True:
            outcome = after_erasure(store.engine, wait_ms=100)
            result.wal_checkpoint = str(outcome["wal_checkpoint"])
            result.frames = int(outcome.get("frames", 0))
            result.checkpointed = int(outcome.get("checkpointed", 0))
            if result.wal_checkpoint != "busy" or time.monotonic() >= deadline:
                return
            if posted is None:
                posted = store.releases.post()
                result.asked_others_to_let_go = True
            time.sleep(RETRY_S)
    finally:
        if posted is not None:
            store.releases.withdraw(posted)


def finish(store: UnlockedStore, *, wait_s: float, progress: Progress | None = None) -> Finish:
    """Finish every pending erasure that can be finished now (waiting up to `wait_s` for
    other readers to let go); the marks of the ones that cannot stay. `progress` follows
    the file scan."""
    result = Finish()
    if sqlite_path(store.url) is None:
        result.raw_file_scan = unscanned(note="not a file store; keys were destroyed")
        result.page_rewrite = {"rewrite": "not applicable"}
        return result
    with store.releases.exempt():
        marks = _marks(store)
        rewritten = _rewrite(store, result) if marks else True
        _checkpoint(store, wait_s, result)
        needles = [needle for found in marks.values() for needle in found]
        try:
            result.raw_file_scan = scan_files(store, needles, progress)
        except ScanFailed as failed:
            result.raw_file_scan = unscanned(error=str(failed))
        clean = (
            rewritten
            and result.wal_checkpoint == "complete"
            and not result.raw_file_scan.get("error")
            and result.raw_file_scan.get("found", 0) == 0
        )
        faults.crash_point(faults.ERASE_SCRUBBED)
        if clean and marks:
            with store.write() as txn:
                txn.conn.execute(delete(P).where(P.c.id.in_(sorted(marks))))
                for record in marks:
                    store.touched(P, record)
                    store.keys.destroy_key(txn.conn, erasure_mark_key_ref(record))
            after_erasure(store.engine, wait_ms=100)  # the mark's own pages, while we are here
    result.pending = [] if clean else sorted(marks)
    return result


def finish_or_raise(
    store: UnlockedStore,
    done: str,
    *,
    wait_s: float = DEFAULT_WAIT_S,
    progress: Progress | None = None,
) -> Finish:
    """Finish the erasure just committed; ErasureIncomplete (one sentence starting with
    `done`, what did happen) when erased bytes remain in the files for now."""
    finished = finish(store, wait_s=wait_s, progress=progress)
    if not finished.done:
        what = f"{done}, but {finished.reason()}; close it and open the store again"
        raise ErasureIncomplete(
            f"{what}, which finishes the erasure.",
            cli_message=f"{what} (for example with 'engram verify'), which finishes the erasure.",
        )
    return finished


def finish_on_open(store: UnlockedStore) -> None:
    """Opening a store finishes what an earlier erasure left pending, when it can; never
    fails the open (verify keeps reporting what is left)."""
    if sqlite_path(store.url) is None:
        return
    try:
        with store.read() as conn:
            if conn.execute(select(P.c.id).limit(1)).first() is None:
                return
        finish(store, wait_s=OPEN_WAIT_S)
    except (exc.DBAPIError, EngramError, OSError):
        return


def problems(store: UnlockedStore) -> list[str]:
    """One sentence per erasure that is not finished (for verify)."""
    with store.read() as conn:
        times = [int(t) for t in conn.execute(select(P.c.at).order_by(P.c.id)).scalars()]
    return [
        f"erasure of {iso(from_micros(at))}: it is not finished, so erased bytes may still be "
        f"in the store's files; {FINISH_ADVICE}"
        for at in times
    ]
