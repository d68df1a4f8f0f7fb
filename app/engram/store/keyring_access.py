"""The OS keyring, called off the caller's thread with a timeout.

A keyring backend can hang (a locked Secret Service waiting for a prompt) or be missing
(headless Linux); neither may freeze the inspector or fall back to a plaintext key.
"""

from __future__ import annotations

import base64
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

import keyring
import keyring.errors

from engram.model.errors import KeyUnavailable

SERVICE = "engram"
DEFAULT_TIMEOUT_S = 5.0

T = TypeVar("T")


class KeyringFailed(KeyUnavailable):
    """The keyring did not do what was asked (it hung, is locked, refused or broke).

    `what` says what happened and `fix` what would mend it; the message adds that the
    passphrase opens the store instead (store_info.unlock says otherwise for a store that
    has none).
    """

    def __init__(self, what: str, fix: str | None = None) -> None:
        self.what, self.fix = what, fix
        mend = f"{fix}, or open" if fix else "open"
        super().__init__(f"{what}; {mend} the store with its passphrase.")


class KeyringAccess:
    """Get, set and delete a store's key in the OS keyring (service 'engram', user = store id)."""

    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self.unusable: str | None = None  # why the last look found no usable backend

    def backend_name(self) -> str | None:
        """The usable backend's name, or None when this computer has no usable keyring
        (then `unusable` says why, when the backend said). Asked on this thread: callers
        that must not hang use `usable_backend`."""
        try:
            # A backend named by PYTHON_KEYRING_BACKEND is checked here: a Secret Service
            # whose daemon is gone raises RuntimeError from its priority.
            backend = keyring.get_keyring()
            usable = float(getattr(backend, "priority", 0)) > 0
        except Exception as error:
            self.unusable = str(error) or type(error).__name__
            return None
        self.unusable = None
        return f"{type(backend).__module__}.{type(backend).__name__}" if usable else None

    def usable_backend(self) -> str | None:
        """`backend_name`, asked with the timeout (finding a backend can itself hang): the
        name, None when there is no usable keyring, KeyringFailed when it does not answer."""
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
        # A daemon thread, not a pool's: a call that never returns (a D-Bus peer that does
        # not answer) must not hold the process at exit, as pool threads are joined then.
        outcome: list[T] = []
        failure: list[BaseException] = []
        done = threading.Event()

        def run() -> None:
            try:
                outcome.append(action())
            except BaseException as error:  # handed to the caller below
                failure.append(error)
            finally:
                done.set()

        try:
            threading.Thread(target=run, name="keyring", daemon=True).start()
        except RuntimeError:  # the interpreter is shutting down: no new threads
            raise KeyUnavailable(
                "The OS keyring cannot be asked while Engram is closing."
            ) from None
        if not done.wait(self.timeout_s):
            raise KeyringFailed(
                f"The OS keyring did not answer within {self.timeout_s:g} seconds", "unlock it"
            )
        if not failure:
            return outcome[0]
        error = failure[0]
        if isinstance(error, keyring.errors.KeyringLocked):
            raise KeyringFailed(
                "The OS keyring is locked, so the store's key cannot be read from it",
                "unlock it (log in to the desktop or open the keyring manager)",
            ) from None
        if isinstance(error, keyring.errors.KeyringError):
            raise KeyringFailed(f"The OS keyring refused the request ({error})") from None
        if isinstance(error, Exception):
            # A backend that broke underneath (its D-Bus peer went away mid-call): the
            # keyring failed, which is one sentence, not a traceback.
            raise KeyringFailed(
                f"The OS keyring failed ({type(error).__name__}: {error})"
            ) from None
        raise error
