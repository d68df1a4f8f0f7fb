"""Anchors: the latest checkpoint's serial and digest, kept where a rolled-back store and
its rolled-back checkpoint file do not reach.

- In the user data folder (`anchors/<store id>-<path tag>.json`): catches an older copy of a
  store put back *with its own older checkpoint* on the computer that saw the newer one.
- In the OS keyring, beside the store key (user `<store id>/checkpoint/<path tag>`): catches
  it even when the whole folder was rolled back. It counts whichever way the store was
  opened (issue 15 item 9): opened with its passphrase, a store whose key or anchor a
  working keyring keeps is checked against it, and its writes advance it.

An anchor is per location (the path tag), so a deliberate copy elsewhere starts its own.
A checkpoint *newer* than an anchor is fine (the anchor lags: a crash, or a write while the
keyring was away); an older one, or the same serial with another digest, is a rollback.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

import platformdirs

from engram.model.errors import KeyUnavailable
from engram.store import contexts, owner_only
from engram.store.checkpoint_format import Anchor
from engram.store.crypto import digest
from engram.store.keyring_access import KeyringAccess

__all__ = ["Anchor", "Anchors"]


class Anchors:
    """The two places a store's checkpoint is anchored."""

    def __init__(self, checkpoint_path: Path, store_id: str, keyring: KeyringAccess) -> None:
        tag = digest(contexts.ANCHOR_PATH, str(checkpoint_path.resolve()).encode()).hex()[:16]
        self.folder = platformdirs.user_data_path("engram") / "anchors"
        self.local_path = self.folder / f"{store_id}-{tag}.json"
        self.store_id = store_id
        self.keyring_user = f"{store_id}/checkpoint/{tag}"
        self.keyring = keyring
        # Whether the keyring anchors this store: True when the key came from there, None
        # (ask it once, when first needed) when the store was opened with its passphrase.
        self.use_keyring: bool | None = False
        self.keyring_failed: str | None = None  # a write to it failed this session
        self.keyring_unasked: str | None = None  # it could not even be asked
        self._swept = False

    def in_keyring(self) -> bool:
        """Whether the OS keyring anchors this store's checkpoint: its key lives there, or a
        working keyring keeps an anchor (or the key) for it."""
        if self.use_keyring is None:
            self.use_keyring = self._keyring_knows_store()
        return self.use_keyring

    def _keyring_knows_store(self) -> bool:
        try:
            if self.keyring.usable_backend() is None:
                return False
            return bool(self.keyring.get_text(self.keyring_user)) or bool(
                self.keyring.get_text(self.store_id)
            )
        except KeyUnavailable as error:
            self.keyring_unasked = str(error)
            return False

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
        if self.in_keyring():
            with contextlib.suppress(KeyUnavailable):
                anchored = self.read_keyring()
                if anchored:
                    serials.append(anchored.serial)
        return max(serials)

    def write_local(self, anchor: Anchor) -> None:
        """Record the checkpoint in the user data folder, owner-only (no fsync: a torn
        anchor only lags)."""
        owner_only.make_folders(self.folder)
        self._sweep()
        fd, temporary = tempfile.mkstemp(
            prefix=self.local_path.name + ".", suffix=".tmp", dir=self.folder
        )
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                os.fchmod(handle.fileno(), owner_only.FILE_MODE)
                handle.write(json.dumps({"anchor": anchor.to_text()}))
            os.replace(temporary, self.local_path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def write_keyring(self, anchor: Anchor) -> None:
        """Record the checkpoint beside the key in the OS keyring, when it anchors this
        store. A keyring that fails is not asked again this session; verify says it lags."""
        if self.keyring_failed or not self.in_keyring():
            return
        try:
            self.keyring.set_text(self.keyring_user, anchor.to_text())
        except Exception as error:  # after a commit: never fails the write
            self.keyring_failed = str(error) or type(error).__name__

    def _sweep(self) -> None:
        """Once per session: remove the temporary anchors killed writers left (of any
        store; one untouched for a minute is nobody's now)."""
        if not self._swept:
            self._swept = True
            owner_only.remove_stale(self.folder, "*.tmp")

    def tighten(self) -> None:
        """Owner-only: the anchors folder, the user data folder it is in, this anchor."""
        for path in (self.folder.parent, self.folder, self.local_path):
            owner_only.tighten(path)
