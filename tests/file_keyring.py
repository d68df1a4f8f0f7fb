"""A keyring backend in a JSON file, for tests whose subprocesses must find a store's key
the way `engram` looks for it (the OS keyring), without the test process's in-memory one.

A subprocess selects it with PYTHON_KEYRING_BACKEND=tests.file_keyring.FileKeyring (the
repository root on PYTHONPATH) and names the file in ENGRAM_TEST_KEYRING_FILE. Tests only:
it keeps secrets in plain text.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import keyring.backend
import keyring.errors
from keyring.compat import properties

FILE_ENV = "ENGRAM_TEST_KEYRING_FILE"


class FileKeyring(keyring.backend.KeyringBackend):
    """Secrets in the JSON file named by ENGRAM_TEST_KEYRING_FILE."""

    @properties.classproperty
    def priority(cls) -> float:
        # Viable only where a test named its file: imported during collection, it must never
        # be picked by keyring's own backend discovery in another test.
        if FILE_ENV not in os.environ:
            raise RuntimeError(f"{FILE_ENV} is not set")
        return 1

    @staticmethod
    def _path() -> Path:
        return Path(os.environ[FILE_ENV])

    def _items(self) -> dict[str, str]:
        path = self._path()
        return dict(json.loads(path.read_text())) if path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._items().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        items = self._items()
        items[f"{service}/{username}"] = password
        self._path().write_text(json.dumps(items))

    def delete_password(self, service: str, username: str) -> None:
        items = self._items()
        if items.pop(f"{service}/{username}", None) is None:
            raise keyring.errors.PasswordDeleteError(username)
        self._path().write_text(json.dumps(items))
