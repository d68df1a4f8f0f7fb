"""Anchors: the latest checkpoint's serial and digest, kept where a rolled-back store and
its rolled-back checkpoint file do not reach.

- In the user data folder (`anchors/<store id>-<path tag>.json`): catches an older copy of a
  store put back *with its own older checkpoint* on the computer that saw the newer one.
- In the OS keyring, beside the store key (user `<store id>/checkpoint/<path tag>`), when the
  store's key lives there: catches it even when the whole folder was rolled back.

An anchor is per location (the path tag), so a deliberate copy elsewhere starts its own.
A checkpoint *newer* than an anchor is fine (the anchor lags: a crash, or a write while the
keyring was away); an older one, or the same serial with another digest, is a rollback.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from engram.model.errors import KeyUnavailable
from engram.store.checkpoint import Checkpoint
from engram.store.crypto import digest
from engram.store.keyring_access import KeyringAccess


@dataclass(frozen=True, slots=True)
class Anchor:
    """What one place last saw of a store's checkpoint."""

    serial: int
    digest: bytes

    def to_text(self) -> str:
        """As kept in a file or the keyring."""
        return f"{self.serial}:{self.digest.hex()}"

    @staticmethod
    def from_text(text: str) -> Anchor:
        """Parse; ValueError if it is not an anchor."""
        serial, _, hexed = text.strip().partition(":")
        return Anchor(int(serial), bytes.fromhex(hexed))

    @staticmethod
    def of(checkpoint: Checkpoint) -> Anchor:
        """The anchor of a checkpoint."""
        return Anchor(checkpoint.serial, checkpoint.digest())


class Anchors:
    """The two places a store's checkpoint is anchored."""

    def __init__(self, checkpoint_path: Path, store_id: str, keyring: KeyringAccess) -> None:
        tag = digest(b"engram-anchor-path", str(checkpoint_path.resolve()).encode()).hex()[:16]
        self.local_path = (
            platformdirs.user_data_path("engram") / "anchors" / f"{store_id}-{tag}.json"
        )
        self.keyring_user = f"{store_id}/checkpoint/{tag}"
        self.keyring = keyring
        self.use_keyring = False  # set when the store key lives in the keyring
        self.keyring_failed: str | None = None

    def read_local(self) -> Anchor | None:
        """The user data folder's anchor (None if this location never had one here)."""
        try:
            return Anchor.from_text(json.loads(self.local_path.read_text("utf-8"))["anchor"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a torn write after a crash: the next write puts it back

    def read_keyring(self) -> Anchor | None:
        """The keyring's anchor (None if absent); KeyUnavailable if the keyring fails."""
        text = self.keyring.get_text(self.keyring_user)
        if not text:
            return None
        try:
            return Anchor.from_text(text)
        except ValueError:
            return None

    def highest_serial(self) -> int:
        """The highest serial any reachable anchor saw (a re-anchor starts above it)."""
        serials = [0]
        local = self.read_local()
        if local:
            serials.append(local.serial)
        if self.use_keyring:
            with contextlib.suppress(KeyUnavailable):
                anchored = self.read_keyring()
                if anchored:
                    serials.append(anchored.serial)
        return max(serials)

    def write_local(self, checkpoint: Checkpoint) -> None:
        """Record the checkpoint in the user data folder (no fsync: a torn anchor only lags)."""
        self.local_path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.local_path.with_name(self.local_path.name + f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps({"anchor": Anchor.of(checkpoint).to_text()}), "utf-8")
        os.replace(temporary, self.local_path)

    def write_keyring(self, checkpoint: Checkpoint) -> None:
        """Record the checkpoint beside the key in the OS keyring, when the key lives there.
        A keyring that fails is not asked again this session; verify says it lags."""
        if not self.use_keyring or self.keyring_failed:
            return
        try:
            self.keyring.set_text(self.keyring_user, Anchor.of(checkpoint).to_text())
        except KeyUnavailable as error:
            self.keyring_failed = str(error)
