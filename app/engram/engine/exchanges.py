"""An exchange is the unit of learning (P4) — pure.

An exchange is the person's turns and the assistant's answer to them: it starts at a user
turn that follows a finished reply and runs until the next such turn. An assistant turn
that is awaiting the user (it asked something) does not finish the exchange: the person's
answer belongs to it. An exchange is complete when one of its assistant turns committed,
or when the host logged that it is complete (an `exchange_end` entry: a host that does not
log replies). Only complete exchanges teach; an exchange whose reply failed or was
cancelled never does, and one still waiting for its reply waits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engram.model.conversation import EntryKind, LogEntry, TurnStatus

# The log entries that decide exchanges (everything else is tools and records).
EXCHANGE_KINDS = (EntryKind.USER, EntryKind.ASSISTANT, EntryKind.EXCHANGE_END)
_COMMITTED = TurnStatus.COMMITTED.value
_AWAITING = TurnStatus.AWAITING_USER.value


def exchanges(entries: Iterable[LogEntry]) -> list[list[LogEntry]]:
    """The log's user, assistant and exchange-end entries cut into exchanges, in order."""
    found: list[list[LogEntry]] = []
    current: list[LogEntry] = []
    answered = False  # the current exchange has had a reply (or an end) that finishes it
    for entry in entries:
        if entry.kind not in EXCHANGE_KINDS:
            continue
        if entry.kind is EntryKind.USER and answered:
            found.append(current)
            current, answered = [], False
        current.append(entry)
        if entry.kind is EntryKind.EXCHANGE_END or (
            entry.kind is EntryKind.ASSISTANT and entry.status != _AWAITING
        ):
            answered = True
    if current:
        found.append(current)
    return found


def complete(exchange: Sequence[LogEntry]) -> bool:
    """P4: a reply committed, or the host marked complete an exchange whose reply did not
    fail (a failed or cancelled reply is a failed exchange, unless a retry committed)."""
    replies = [e.status for e in exchange if e.kind is EntryKind.ASSISTANT]
    if _COMMITTED in replies:
        return True
    failed = any(status != _AWAITING for status in replies)
    return not failed and any(e.kind is EntryKind.EXCHANGE_END for e in exchange)


def waiting(exchange: Sequence[LogEntry]) -> bool:
    """The exchange has the person's turns and no finished reply yet: the host may still
    mark it complete."""
    replies = [e.status for e in exchange if e.kind is EntryKind.ASSISTANT]
    has_user = any(e.kind is EntryKind.USER for e in exchange)
    ended = any(e.kind is EntryKind.EXCHANGE_END for e in exchange)
    return has_user and not ended and all(status == _AWAITING for status in replies)


def learnable_turns(entries: Iterable[LogEntry]) -> list[LogEntry]:
    """The committed user and assistant turns of complete exchanges, in order (P4)."""
    return [
        e
        for exchange in exchanges(entries)
        if complete(exchange)
        for e in exchange
        if e.kind is not EntryKind.EXCHANGE_END and e.status == _COMMITTED
    ]
