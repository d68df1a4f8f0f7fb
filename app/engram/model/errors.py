"""Errors a user can meet. Each message is one plain sentence: what happened, what to do."""

from __future__ import annotations


class EngramError(Exception):
    """Base of every error Engram reports to a person rather than as a bug.

    The message is face-neutral: it never names a command-line flag or command, since the
    window shows it too. Where the command line can say more precisely what to type, it
    is given as `cli_message`, which only the CLI prints.
    """

    def __init__(self, message: str = "", *, cli_message: str | None = None) -> None:
        super().__init__(message)
        self.cli_message = cli_message

    def for_command_line(self) -> str:
        """The sentence the CLI prints."""
        return self.cli_message or str(self)


class InvalidInput(EngramError):
    """The request itself is malformed (bad id, kind, scope, time, size)."""


class NotFound(EngramError):
    """An id names nothing in this store (or nothing this person may see)."""


class StoreMissing(EngramError):
    """There is no store at the given location."""


class StoreExists(EngramError):
    """A store already exists where one was to be created."""


class WrongPassphrase(EngramError):
    """The passphrase does not open this store. Nothing was written."""


class CorruptStore(EngramError):
    """The store's bytes are damaged or were changed outside Engram."""


class KeyUnavailable(EngramError):
    """No key source (keyring or passphrase) can open the store."""


class PassphraseNeeded(KeyUnavailable):
    """The keyring did not give the store's key, and the store's passphrase would open it:
    a face that can ask for the passphrase (a terminal) asks."""


class Conflict(EngramError):
    """The thing changed since it was read (stale revision, concurrent writer)."""


class NotAllowed(EngramError):
    """The action is refused by a rule (scope, incognito, confirmation)."""


class StateConflict(Conflict, NotAllowed):
    """The thing is no longer in a state that allows this (a note already closed, a
    candidate already decided): a conflict with its current state (HTTP 409)."""


class NotAStore(EngramError):
    """The file is not an Engram store (empty, not SQLite, or another program's database);
    it was left exactly as it was."""


class ReadOnlyStore(EngramError):
    """The store, or the folder it lives in, cannot be written; nothing was changed."""


class StorageFault(EngramError):
    """The storage under the store failed — a full disk, an I/O error, a database server
    that does not answer. This is not damage: the store is as it was, and no sentence of
    this kind ever invites a restore from a backup."""


class DiskFull(StorageFault):
    """The disk (or the database server's disk) has no room left."""


class ServerUnreachable(StorageFault):
    """The database server does not answer (stopped, unreachable, or it went away)."""


class UnreadableData(CorruptStore):
    """The database itself reported damage (a malformed page, a file that is not a
    database, text that is not UTF-8); `detail` is what it said."""

    def __init__(self, message: str, *, detail: str, cli_message: str | None = None) -> None:
        super().__init__(message, cli_message=cli_message)
        self.detail = detail


class ChangedOutsideEngram(CorruptStore):
    """A row outside the chains is not what the signed ledger last recorded for it (changed,
    added or deleted behind Engram's back), so the runtime refuses to act on it."""


def changed_outside(what: str) -> ChangedOutsideEngram:
    """The refusal of a row the signed ledger does not vouch for: `what` says whose record
    it is and what is refused."""
    return ChangedOutsideEngram(
        f"{what}; verify the store's integrity to see what changed.",
        cli_message=f"{what}; run 'engram verify' to see what changed.",
    )


def damaged(what_happened: str) -> CorruptStore:
    """A damaged store, and how to find out more: in the window, Verify integrity; on the
    command line, `engram verify`."""
    return CorruptStore(
        f"{what_happened}; verify the store's integrity to see what is affected.",
        cli_message=f"{what_happened}; run 'engram verify'.",
    )


class ErasureIncomplete(EngramError):
    """An erasure committed, but erased bytes may remain in the store's files for now."""


class StoreReleased(EngramError):
    """A read was stopped because another Engram process is finishing an erasure; retry."""
