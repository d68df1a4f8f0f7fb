"""What every command gets: parsed arguments and a lazily opened store."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field

from engram.control.session import PersonSession
from engram.model.errors import KeyUnavailable
from engram.store.store import Store


@dataclass
class CommandContext:
    """Arguments plus the store, opened on first use and closed at exit."""

    args: argparse.Namespace
    _store: Store | None = field(default=None, repr=False)

    @property
    def as_json(self) -> bool:
        """Whether --json was given."""
        return bool(getattr(self.args, "json", False))

    def passphrase(self) -> str | None:
        """The passphrase from --passphrase-env VAR, --passphrase-file FILE or
        --passphrase-fd N (issue 20 item 7), or None to use the keyring."""
        path = getattr(self.args, "passphrase_file", None)
        if path:
            try:
                with open(path, encoding="utf-8") as source:
                    return source.readline().rstrip("\r\n")
            except OSError as error:
                raise KeyUnavailable(
                    f"--passphrase-file {path} cannot be read ({error.strerror})."
                ) from error
        descriptor = getattr(self.args, "passphrase_fd", None)
        if descriptor is not None:
            try:
                with os.fdopen(descriptor, encoding="utf-8", closefd=False) as source:
                    return source.readline().rstrip("\r\n")
            except OSError as error:
                raise KeyUnavailable(
                    f"--passphrase-fd {descriptor} is not an open file descriptor."
                ) from error
        variable = self.args.passphrase_env
        if not variable:
            return None
        value = os.environ.get(variable)
        if value is None:
            raise KeyUnavailable(
                f"--passphrase-env names {variable}, but that environment variable is not set."
            )
        return value

    def store(self) -> Store:
        """The unlocked store."""
        if self._store is None:
            self._store = Store.open(self.args.store, passphrase=self.passphrase())
        return self._store

    def session(self, person: str) -> PersonSession:
        """The person the command acts on, under --actor if given (C1)."""
        return PersonSession.open(self.store(), person, self.args.actor)

    def session_maybe_new(self, person: str) -> PersonSession:
        """A session for a person the store may not hold yet: the write that follows
        creates them in its own transaction (`create_person`), as the HTTP face does."""
        return PersonSession.open_new(self.store(), person, self.args.actor)

    def warnings(self) -> list[str]:
        """What the command met that a person should know of though it worked: a checkpoint
        that could not be updated after a commit, the clock behind a journal's newest entry
        (store_time.py). They go to stderr; the command still succeeded."""
        if self._store is None:
            return []
        behind = [late.sentence() for late in self._store.clock_behind.values()]
        return [*self._store.take_warnings(), *behind]

    def close(self) -> None:
        """Release the store."""
        if self._store is not None:
            self._store.close()
            self._store = None
