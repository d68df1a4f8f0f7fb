"""What every command gets: parsed arguments and a lazily opened store."""

from __future__ import annotations

import argparse
import getpass
import io
import os
import sys
from dataclasses import dataclass, field

from engram.control.passphrase import check_new_passphrase
from engram.control.session import PersonSession
from engram.model.errors import InvalidInput, KeyUnavailable, PassphraseNeeded, WrongPassphrase
from engram.store.location import describe, store_url
from engram.store.store import Store

TRIES = 3  # passphrases typed on a terminal before giving up, as sudo does
SOURCES = "--passphrase-env VAR, --passphrase-file FILE or --passphrase-fd N"
WEAK_ALLOWED = "--weak-passphrase allows it, for sample data and tests"


def on_terminal() -> bool:
    """Whether a person at a terminal can be asked (standard input is one)."""
    try:
        return os.isatty(sys.stdin.fileno())
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return False


def ask(prompt: str) -> str:
    """Read a passphrase from the terminal without echoing it (getpass)."""
    try:
        return getpass.getpass(prompt)
    except EOFError:
        raise KeyUnavailable("No passphrase was typed; nothing was opened or changed.") from None


def read_source(env: str | None, path: str | None, descriptor: int | None, flag: str) -> str | None:
    """A passphrase from an environment variable, a file's first line or an open file
    descriptor's first line (`flag` names the options in what goes wrong), or None."""
    if path:
        try:
            with open(path, encoding="utf-8") as source:
                return source.readline().rstrip("\r\n")
        except OSError as error:
            raise KeyUnavailable(
                f"--{flag}-file {path} cannot be read ({error.strerror})."
            ) from error
    if descriptor is not None:
        try:
            with os.fdopen(descriptor, encoding="utf-8", closefd=False) as source:
                return source.readline().rstrip("\r\n")
        except OSError as error:
            raise KeyUnavailable(
                f"--{flag}-fd {descriptor} is not an open file descriptor."
            ) from error
    if not env:
        return None
    value = os.environ.get(env)
    if value is None:
        raise KeyUnavailable(f"--{flag}-env names {env}, but that environment variable is not set.")
    return value


@dataclass
class CommandContext:
    """Arguments plus the store, opened on first use and closed at exit."""

    args: argparse.Namespace
    _store: Store | None = field(default=None, repr=False)
    _typed: str | None = field(default=None, repr=False)  # the passphrase typed to open it
    _given: tuple[str | None] | None = field(default=None, repr=False)  # read once: a pipe

    @property
    def as_json(self) -> bool:
        """Whether --json was given."""
        return bool(getattr(self.args, "json", False))

    def passphrase(self) -> str | None:
        """The passphrase from --passphrase-env VAR, --passphrase-file FILE or
        --passphrase-fd N (issue 20 item 7), or None to use the keyring (or ask)."""
        if self._given is None:  # a file descriptor gives its line once: keep it
            args = self.args
            self._given = (
                read_source(
                    getattr(args, "passphrase_env", None),
                    getattr(args, "passphrase_file", None),
                    getattr(args, "passphrase_fd", None),
                    "passphrase",
                ),
            )
        return self._given[0]

    def where(self) -> str:
        """The store's location, as messages name it."""
        return describe(store_url(self.args.store))

    def store(self) -> Store:
        """The unlocked store: from a passphrase given, else the keyring, else (on a
        terminal) the passphrase typed; without a terminal, one sentence naming the ways to
        give it (PassphraseNeeded's command-line message)."""
        if self._store is None:
            given = self.passphrase()
            try:
                self._store = Store.open(self.args.store, passphrase=given)
            except PassphraseNeeded:
                if given is not None or not on_terminal():
                    raise
                self._store = self._open_typed()
        return self._store

    def _open_typed(self) -> Store:
        for attempt in range(1, TRIES + 1):
            typed = ask(f"Passphrase for {self.where()}: ")
            try:
                opened = Store.open(self.args.store, passphrase=typed)
            except WrongPassphrase:
                if attempt == TRIES:
                    raise
                print("That passphrase does not open the store; try again.", file=sys.stderr)
                continue
            self._typed = typed
            return opened
        raise AssertionError("unreachable")

    def confirming_passphrase(self) -> str:
        """The store's passphrase, to prove it is known before the key is forgotten: the
        one given, else typed on a terminal."""
        given = self.passphrase()
        if given is not None or self._typed is not None:
            return given if given is not None else str(self._typed)
        if not on_terminal():
            raise KeyUnavailable(
                "Forgetting the key needs the store's passphrase, to be sure something "
                "still opens the store afterwards; nothing was changed.",
                cli_message="Forgetting the key needs the store's passphrase, to be sure "
                f"something still opens the store afterwards; give it with {SOURCES}, or run "
                "the command on a terminal to be asked; nothing was changed.",
            )
        return ask(f"Passphrase for {self.where()} (the only key once this one is gone): ")

    def new_passphrase(
        self, given: str | None, *, nothing: str, allow_weak: bool, terminal_required: bool
    ) -> str | None:
        """A new passphrase: `given` (from a source), else typed twice on a terminal; refused
        below the window's strength floor unless `allow_weak`. None when neither is there
        and `terminal_required` is False (the caller has another way)."""
        if given is None:
            if not on_terminal():
                if terminal_required:
                    raise InvalidInput(
                        f"No new passphrase was given and there is no terminal to ask on; "
                        f"{nothing}."
                    )
                return None
            given = ask("New passphrase: ")
            self._check_strength(given, nothing, allow_weak)
            if ask("The same passphrase again: ") != given:
                raise InvalidInput(f"The two passphrases differ; {nothing}.")
            return given
        self._check_strength(given, nothing, allow_weak)
        return given

    @staticmethod
    def _check_strength(passphrase: str, nothing: str, allow_weak: bool) -> None:
        try:
            check_new_passphrase(passphrase, allow_weak=allow_weak)
        except InvalidInput as refused:
            said = str(refused).rstrip(".")
            extra = "" if not passphrase else f" ({WEAK_ALLOWED})"
            raise InvalidInput(f"{said}; {nothing}{extra}.") from None

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
