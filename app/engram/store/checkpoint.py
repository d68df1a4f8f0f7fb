"""A signed checkpoint of every chain's length and head, kept outside the database.

Swapping in an older copy of the store (rollback) leaves the database behind the checkpoint,
which `verify` reports. The file sits beside a SQLite store (`<store>.checkpoint`, so a copy
for offline review can carry it) or, for server URLs, in the user data folder. Erased chains
are remembered only by a keyed hash, so the file names nobody.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from engram.store.crypto import Signer, canonical_json, signature_ok


@dataclass
class Checkpoint:
    """Chain id -> (length, head hash); plus keyed hashes of erased chains."""

    store_id: str
    chains: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)

    def _signed_bytes(self) -> bytes:
        body = {
            "store": self.store_id,
            "chains": {k: [n, h.hex()] for k, (n, h) in sorted(self.chains.items())},
            "gone": sorted(self.gone),
        }
        return canonical_json(body).encode()


class CheckpointFile:
    """Reads, merges and atomically rewrites the checkpoint file."""

    def __init__(self, path: Path, store_id: str, verify_key: bytes) -> None:
        self.path = path
        self.store_id = store_id
        self.verify_key = verify_key

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
        )
        signature = base64.b64decode(data["signature"])
        if checkpoint.store_id != self.store_id:
            raise ValueError("the checkpoint belongs to another store")
        if not signature_ok(self.verify_key, checkpoint._signed_bytes(), signature):
            raise ValueError("the checkpoint's signature does not match")
        return checkpoint

    def update(
        self,
        signer: Signer,
        heads: Mapping[str, tuple[int, bytes]],
        gone: Mapping[str, str],
        revived: Mapping[str, str] | None = None,
    ) -> None:
        """Merge new heads (longest wins), erased chains and chains started again under an
        erased name (a person re-created after an erase), then rewrite atomically."""
        with self._locked():
            try:
                current = self.read() or Checkpoint(self.store_id)
            except (ValueError, KeyError, json.JSONDecodeError):
                # Never paper over a damaged checkpoint: set it aside (verify keeps saying
                # so, since a rollback before now can no longer be ruled out) and start anew.
                if not self.damaged_path.exists():
                    os.replace(self.path, self.damaged_path)
                current = Checkpoint(self.store_id)
            for chain, (length, head) in heads.items():
                known = current.chains.get(chain)
                if known is None or known[0] <= length:
                    current.chains[chain] = (length, head)
            for chain, hidden in gone.items():
                current.chains.pop(chain, None)
                current.gone.add(hidden)
            for chain, hidden in (revived or {}).items():
                current.gone.discard(hidden)
                current.chains[chain] = heads[chain]
            self._write(current, signer)

    def _write(self, checkpoint: Checkpoint, signer: Signer) -> None:
        signed = checkpoint._signed_bytes()
        data = json.loads(signed)
        data["signature"] = base64.b64encode(signer.sign(signed)).decode()
        temporary = self.path.with_suffix(self.path.suffix + ".tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(data, handle, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_suffix(self.path.suffix + ".lock")
        with open(lock_path, "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
