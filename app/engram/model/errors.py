"""Errors a user can meet. Each message is one plain sentence: what happened, what to do."""

from __future__ import annotations


class EngramError(Exception):
    """Base of every error Engram reports to a person rather than as a bug."""


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


class ErasureIncomplete(EngramError):
    """An erasure committed, but erased bytes may remain in the store's files for now."""


class StoreReleased(EngramError):
    """A read was stopped because another Engram process is finishing an erasure; retry."""
