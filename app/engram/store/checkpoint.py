"""A signed checkpoint of every chain's length and head, kept outside the database.

Swapping in an older copy of the store (rollback) leaves the database behind the checkpoint,
which `verify` reports. The file sits beside a SQLite store (`<store>.checkpoint`, so a copy
for offline review can carry it) or, for server URLs, in the user data folder. Erased chains
are remembered only by a keyed hash, so the file names nobody.

Rules that keep it honest:
- Only creating a store and `engram checkpoint reanchor` start a checkpoint. A write that
  finds none does not make a new one, so a deleted checkpoint stays reported until someone
  re-anchors on purpose (a fresh one would hide the rollback it was deleted to hide).
- Every update holds the checkpoint's lock from just before the database commit until the
  file is rewritten (`Store.write`), so updates land in commit order; and a chain already
  recorded as erased is never put back by an update, unless the same write started it again.
- Each update raises a serial number; anchors elsewhere (the user data folder, the OS
  keyring) keep the latest serial and digest, so an older copy of the store *with* its own
  older checkpoint is caught too (`checkpoint_anchor`).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from engram.store.crypto import Signer, canonical_json, digest, signature_ok


@dataclass
class Checkpoint:
    """Chain id -> (length, head hash); keyed hashes of erased chains; a serial number."""

    store_id: str
    chains: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)
    serial: int = 0

    def signed_bytes(self) -> bytes:
        """What the signature covers (files from before serials have none)."""
        body: dict[str, object] = {
            "store": self.store_id,
            "chains": {k: [n, h.hex()] for k, (n, h) in sorted(self.chains.items())},
            "gone": sorted(self.gone),
        }
        if self.serial:
            body["serial"] = self.serial
        return canonical_json(body).encode()

    def digest(self) -> bytes:
        """What anchors keep of this checkpoint."""
        return digest(b"engram-checkpoint", self.signed_bytes())


class CheckpointFile:
    """Reads, merges and atomically rewrites the checkpoint file."""

    def __init__(
        self, path: Path, store_id: str, verify_key: bytes, hide: Callable[[str], str]
    ) -> None:
        self.path = path
        self.store_id = store_id
        self.verify_key = verify_key
        self.hide = hide
        self._held = threading.local()

    @property
    def damaged_path(self) -> Path:
        """Where a damaged checkpoint is kept for whoever investigates."""
        return self.path.with_name(self.path.name + ".damaged")

    def read(self) -> Checkpoint | None:
        """The checkpoint, None if absent; ValueError if unreadable or badly signed."""
        if not self.path.exists():
            return None
        data = json.loads(self.path.read_text("utf-8"))
        checkpoint = Checkpoint(
            store_id=data["store"],
            chains={k: (int(n), bytes.fromhex(h)) for k, (n, h) in data["chains"].items()},
            gone=set(data.get("gone", [])),
            serial=int(data.get("serial", 0)),
        )
        signature = base64.b64decode(data["signature"])
        if checkpoint.store_id != self.store_id:
            raise ValueError("the checkpoint belongs to another store")
        if not signature_ok(self.verify_key, checkpoint.signed_bytes(), signature):
            raise ValueError("the checkpoint's signature does not match")
        return checkpoint

    def update(
        self,
        signer: Signer,
        heads: Mapping[str, tuple[int, bytes]],
        gone: Mapping[str, str],
        revived: Mapping[str, str] | None = None,
    ) -> Checkpoint | None:
        """Merge new heads (longest wins), erased chains and chains started again under an
        erased name (a person re-created after an erase), then rewrite atomically. Returns
        the new checkpoint, or None when there is none to update (never re-created here)."""
        revived = revived or {}
        with self.locked():
            try:
                current = self.read()
            except (ValueError, KeyError, TypeError, json.JSONDecodeError):
                # Never paper over a damaged checkpoint: set it aside (verify keeps saying
                # so, since a rollback before now can no longer be ruled out) and start anew.
                if not self.damaged_path.exists():
                    os.replace(self.path, self.damaged_path)
                current = Checkpoint(self.store_id)
            if current is None:
                return None
            for hidden in revived.values():
                current.gone.discard(hidden)
            for chain, (length, head) in heads.items():
                if self.hide(chain) in current.gone:
                    continue  # erased since this write: a late update must not bring it back
                known = current.chains.get(chain)
                if known is None or known[0] <= length or chain in revived:
                    current.chains[chain] = (length, head)
            for chain, hidden in gone.items():
                current.chains.pop(chain, None)
                current.gone.add(hidden)
            current.serial += 1
            self._write(current, signer)
            return current

    def start(
        self,
        signer: Signer,
        heads: Mapping[str, tuple[int, bytes]],
        gone: set[str],
        *,
        after_serial: int = 0,
    ) -> Checkpoint:
        """Write a new checkpoint from scratch (a new store, or a deliberate re-anchor), with
        a serial above every one seen before so no anchor takes it for an older copy."""
        with self.locked():
            try:
                previous = self.read()
            except (ValueError, KeyError, TypeError, json.JSONDecodeError):
                previous = None
            serial = max(after_serial, previous.serial if previous else 0) + 1
            checkpoint = Checkpoint(self.store_id, dict(heads), set(gone), serial)
            self._write(checkpoint, signer)
            return checkpoint

    def _write(self, checkpoint: Checkpoint, signer: Signer) -> None:
        signed = checkpoint.signed_bytes()
        data = json.loads(signed)
        data["signature"] = base64.b64encode(signer.sign(signed)).decode()
        temporary = self.path.with_suffix(self.path.suffix + ".tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(data, handle, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the checkpoint's lock (across processes and threads; re-entrant per thread)."""
        if getattr(self._held, "depth", 0):
            self._held.depth += 1
            try:
                yield
            finally:
                self._held.depth -= 1
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_suffix(self.path.suffix + ".lock")
        with open(lock_path, "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._held.depth = 1
            try:
                yield
            finally:
                self._held.depth = 0
                fcntl.flock(lock, fcntl.LOCK_UN)
