"""The audit record of a person's data leaving the store (issue 15 item 7).

Every face that writes out what is kept about a person — `engram export` (to a file or to
standard output), the inspector's export and its access report — appends one `exported`
event to the person's journal: who (the actor), when (the event's time), what (a JSON
export or an access report) and where to (a file or standard output). Never the path: a
file name can itself say something about the person. The fold treats it as audit-only.

An export is recorded only once its content is complete (a file's bytes synced, standard
output flushed), so a failed export leaves no record of success; if a finished file then
cannot be put in place, a second record says so.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

from engram.control.private_file import PrivateFile
from engram.control.session import PersonSession
from engram.model.errors import EngramError, ReadOnlyStore
from engram.model.event_bodies import Exported
from engram.model.events import EventType, NewEvent
from engram.store import journal

log = logging.getLogger(__name__)

What = Literal["export", "access_report", "review_copy", "audit_csv"]
To = Literal["file", "stdout"]


# Why nothing can be exported from a store opened read-only (issue 17 item 12).
EXPORT_READ_ONLY = (
    "This store is open read-only, so an export could not be recorded in its audit log and "
    "nothing was exported; copy the store with its .checkpoint file to a folder you can "
    "write to, and export from that copy."
)


def ensure_recordable(session: PersonSession) -> None:
    """Refuse, before anything is read or written, an export that could not be recorded:
    every export is in the audit log, or it does not happen (a store opened read-only)."""
    if session.store.read_only:
        raise ReadOnlyStore(EXPORT_READ_ONLY)


def record_export(session: PersonSession, what: What, to: To, *, failed: bool = False) -> None:
    """Append the `exported` event: the session's actor sent `what` `to` somewhere."""
    ensure_recordable(session)
    body = Exported(what, to, failed)
    with session.store.write() as txn:
        journal.append(
            session.store, txn, session.person, [NewEvent(EventType.EXPORTED, session.actor, body)]
        )


def publish_recorded(session: PersonSession, file: PrivateFile, what: What) -> Path:
    """Record a finished private file as exported, then put it in place.

    Recorded first, so a record that cannot be written leaves no file behind either (the
    temporary file goes when `file` is closed). A rename that fails after the record is
    recorded as a failure too, so the audit log never claims a file that does not exist."""
    record_export(session, what, "file")
    try:
        return file.publish()
    except EngramError:
        try:
            record_export(session, what, "file", failed=True)
        except EngramError as error:  # the rename's own sentence is the one to show
            log.error("The failed %s could not be recorded either: %s", what, error)
        raise
