"""The OS keyring, called off the caller's thread with a timeout.

A keyring backend can hang (a locked Secret Service waiting for a prompt) or be missing
(headless Linux); neither may freeze the inspector or fall back to a plaintext key.
"""

from __future__ import annotations

import base64
import concurrent.futures
import contextlib
from collections.abc import Callable
from typing import TypeVar

import keyring
import keyring.errors

from engram.model.errors import KeyUnavailable

SERVICE = "engram"
DEFAULT_TIMEOUT_S = 5.0

T = TypeVar("T")


class KeyringAccess:
    """Get, set and delete a store's key in the OS keyring (service 'engram', user = store id)."""

    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s

    def backend_name(self) -> str | None:
        """The usable backend's name, or None when this computer has no usable keyring."""
        backend = keyring.get_keyring()
        try:
            # A Secret Service backend asks D-Bus here and raises when the daemon is gone.
            usable = float(getattr(backend, "priority", 0)) > 0
        except Exception:
            usable = False
        if not usable:
            return None
        return f"{type(backend).__module__}.{type(backend).__name__}"

    def usable_backend(self) -> str | None:
        """`backend_name`, asked with the timeout (finding a backend can itself hang): the
        name, None when there is no usable keyring, KeyUnavailable when it does not answer."""
        return self._call(self.backend_name)

    def get(self, store_id: str) -> bytes | None:
        """The store key, or None if the keyring has none for this store."""
        text = self._call(lambda: keyring.get_password(SERVICE, store_id))
        return base64.b64decode(text) if text else None

    def set(self, store_id: str, key: bytes) -> None:
        """Remember the store key on this computer."""
        encoded = base64.b64encode(key).decode("ascii")
        self._call(lambda: keyring.set_password(SERVICE, store_id, encoded))

    def get_text(self, user: str) -> str | None:
        """Another entry of this store under service 'engram' (the checkpoint anchor)."""
        return self._call(lambda: keyring.get_password(SERVICE, user))

    def set_text(self, user: str, text: str) -> None:
        """Keep a short text under service 'engram' (the checkpoint anchor)."""
        self._call(lambda: keyring.set_password(SERVICE, user, text))

    def delete(self, store_id: str) -> None:
        """Forget the store key on this computer (no error if it was not there)."""

        def forget() -> None:
            with contextlib.suppress(keyring.errors.PasswordDeleteError):
                keyring.delete_password(SERVICE, store_id)

        self._call(forget)

    def _call(self, action: Callable[[], T]) -> T:
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="keyring")
        try:
            asked = pool.submit(action)
        except RuntimeError:  # the interpreter is shutting down: no new threads
            raise KeyUnavailable(
                "The OS keyring cannot be asked while Engram is closing."
            ) from None
        try:
            return asked.result(timeout=self.timeout_s)
        except concurrent.futures.TimeoutError:
            raise KeyUnavailable(
                f"The OS keyring did not answer within {self.timeout_s:g} seconds; "
                "unlock it, or open the store with its passphrase."
            ) from None
        except keyring.errors.KeyringLocked:
            raise KeyUnavailable(
                "The OS keyring is locked, so the store's key cannot be read from it; unlock "
                "it (log in to the desktop or open the keyring manager), or open the store "
                "with its passphrase."
            ) from None
        except keyring.errors.KeyringError as error:
            raise KeyUnavailable(
                f"The OS keyring refused the request ({error}); "
                "open the store with its passphrase instead."
            ) from None
        finally:
            pool.shutdown(wait=False)
