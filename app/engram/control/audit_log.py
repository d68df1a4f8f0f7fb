"""The audit workspace (issue 21 item 5): a person's whole journal, filtered and read a page
at a time, the way the notes table reads notes.

A filter narrows by actor, action (event type), a time range and a note in SQL
(store.journal_filter), so its count is known at once and any page costs what the first
does; words are then looked for in each row as people read it (the audit sentence with
its notes quoted, the reason, who acted), so a search scans the filtered rows in journal
order, only as far as the pages asked for, and `finish` scans the rest (a background job
with progress and cancel). Every row says what it links to: its note, candidate,
conversation or turn. The command line (`engram audit`) streams the same rows, and the
inspector saves the filtered rows as CSV (recorded in the audit log, as every export is).
"""

from __future__ import annotations

import csv
import io
import threading
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

from engram.control import forensics
from engram.control.export_record import ensure_recordable, publish_recorded
from engram.control.private_file import PrivateFile
from engram.control.session import PersonSession
from engram.control.wording import actor_named
from engram.engine.words import fold
from engram.model.errors import InvalidInput
from engram.model.event_bodies import CandidateReviewed, ConversationDeleted, candidate_named
from engram.model.events import Event, EventType
from engram.model.progress import Progress
from engram.store import journal_filter
from engram.store.journal_filter import JournalWhere

PAGE = 50  # rows of a page the table asks for
SCAN = 200  # events read, named and searched at once by a word search
Cancelled = Callable[[], bool]

# Each action in people's words, for the filter's choices (the CLI takes the type names).
ACTIONS: dict[str, str] = {
    EventType.NOTE_ADDED.value: "a note added",
    EventType.RESTATED.value: "a note restated",
    EventType.CONTRADICTED.value: "a note contradicted",
    EventType.CORRECTED.value: "a note corrected",
    EventType.SCOPE_CHANGED.value: "a change of scope",
    EventType.DELETED.value: "a note deleted",
    EventType.MERGED.value: "notes merged",
    EventType.RETIRED.value: "a passing note retired",
    EventType.DUPLICATE_REMOVED.value: "a duplicate removed",
    EventType.REOPENED.value: "a note reopened",
    EventType.UNDONE.value: "a change undone",
    EventType.CANDIDATE_SUGGESTED.value: "a suggestion made",
    EventType.CANDIDATE_REVIEWED.value: "a suggestion decided",
    EventType.CANDIDATE_APPLIED.value: "a suggestion applied",
    EventType.ITEM_USED.value: "notes used by the agent",
    EventType.CONVERSATION_DELETED.value: "a conversation deleted",
    EventType.DIGEST_LINE_ADDED.value: "a conversation summed up",
    EventType.PROFILE_REBUILT.value: "the profile rebuilt",
    EventType.EXTRACTION_CHECKPOINT.value: "turns marked as learned from",
    EventType.EXPORTED.value: "data exported",
    EventType.PERSON_CREATED.value: "the person added",
}
CSV_COLUMNS = (
    "entry",
    "when",
    "actor",
    "actor_id",
    "action",
    "reason",
    "type",
    "conversation",
    "turn",
    "notes",
    "candidate",
)


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """Which journal rows to list; the empty filter lists them all."""

    actors: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()  # event type names (`note_added`, `candidate_reviewed`)
    since: datetime | None = None
    until: datetime | None = None
    note: str | None = None
    words: str = ""
    terms: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.actions) - set(ACTIONS))
        if unknown:
            raise InvalidInput(
                f"{unknown[0]!r} is not an action the journal records; choose one of "
                f"{', '.join(sorted(ACTIONS))}."
            )
        if self.since and self.until and self.since > self.until:
            raise InvalidInput("The start of the time range is after its end; swap them.")
        object.__setattr__(self, "terms", tuple(fold(self.words).split()))

    def where(self) -> JournalWhere:
        """The part SQL decides."""
        return JournalWhere(self.actors, self.actions, self.since, self.until, self.note)

    def keeps(self, row: dict[str, Any]) -> bool:
        """Whether a row's words hold every search term (case and accents folded)."""
        if not self.terms:
            return True
        said = row_words(row)
        return all(term in said for term in self.terms)


def day_start(text: str) -> datetime:
    """A date ("2026-11-29") or ISO time as the first moment it names (UTC)."""
    return _moment(text, end=False)


def day_end(text: str) -> datetime:
    """A date or ISO time as the last moment it names: a date means its whole day."""
    return _moment(text, end=True)


def _moment(text: str, *, end: bool) -> datetime:
    text = text.strip()
    try:
        if len(text) == 10:  # a date alone
            moment = datetime.combine(datetime.fromisoformat(text).date(), time(), UTC)
            return moment + timedelta(days=1, microseconds=-1) if end else moment
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"{text!r} is not a date or time; write e.g. 2026-11-29 or 2026-11-29T14:00:00Z."
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def row_words(row: dict[str, Any]) -> str:
    """What a search looks in: the row as people read it, and its ids (folded)."""
    parts = [row.get("said") or "", row.get("action") or "", row.get("reason") or ""]
    parts += [actor_named(row["actor"]), row["actor"]]
    return fold(" ".join(parts))


def links(event: Event) -> list[dict[str, Any]]:
    """What a row links to, the first being where activating it goes: the candidate of a
    suggestion, the note an edit was about, the turn notes were used in, the conversation."""
    body = event.body
    found: list[dict[str, Any]] = []
    candidate = candidate_named(body)
    if candidate is not None:
        found.append({"kind": "candidate", "id": str(candidate)})
    if event.type is not EventType.ITEM_USED:
        found += [{"kind": "note", "id": str(n)} for n in body.named_notes()]
    if event.cause is not None:
        cause = event.cause
        if cause.turn:
            found.append({"kind": "turn", "conversation": cause.conversation, "turn": cause.turn})
        else:
            found.append({"kind": "conversation", "conversation": cause.conversation})
    if isinstance(body, ConversationDeleted):
        found.append({"kind": "conversation", "conversation": body.conversation})
    found += [{"kind": "note", "id": str(n)} for n in body.listed_notes()]
    unique: list[dict[str, Any]] = []
    for link in found:
        if link not in unique:
            unique.append(link)
    return unique


def rows_of(session: PersonSession, conn: Any, events: list[Event]) -> list[dict[str, Any]]:
    """Events as audit rows (forensics' words), each with its links and, for a decision
    on a suggestion, the candidate, the decision and the revision it was made on."""
    rows = forensics.audit_rows(session, conn, events)
    for row, event in zip(rows, events, strict=True):
        row["links"] = links(event)
        body = event.body
        if isinstance(body, CandidateReviewed):
            row |= {"decision": body.decision, "revision": body.revision}
        candidate = candidate_named(body)
        if candidate is not None:
            row["candidate"] = str(candidate)
    return rows


class AuditPages:
    """The rows a filter lists, a page at a time. Without words the total is known at once
    (a count in SQL); with words it grows as pages are asked for, and is the total once
    `complete`. Safe to read from several worker threads."""

    def __init__(self, session: PersonSession, audit_filter: AuditFilter) -> None:
        self.session = session
        self.filter = audit_filter
        self._where = audit_filter.where()
        self._lock = threading.Lock()
        self._seqs: array[int] | None = None  # every SQL match, once `load_seqs` ran
        self._found: array[int] = array("q")  # a word search's matches so far
        self._scanned = 0  # a word search has looked at every match up to this seq
        self._looked = 0  # how many it looked at
        self._complete = not audit_filter.terms
        with session.store.read() as conn:
            self._sql_total = journal_filter.count(conn, session.person, self._where)
        if not self._sql_total:
            self._complete = True

    @property
    def searching(self) -> bool:
        """Whether words are looked for (the total then grows)."""
        return bool(self.filter.terms)

    @property
    def complete(self) -> bool:
        """Whether the total is final."""
        return self._complete

    @property
    def total(self) -> int:
        """The rows known now."""
        return len(self._found) if self.searching else self._sql_total

    def load_seqs(self) -> None:
        """Read every matching seq, so deep pages are read by seq (off the UI thread)."""
        if self.searching or self._seqs is not None:
            return
        with self.session.store.read() as conn:
            seqs = journal_filter.matching_seqs(conn, self.session.person, self._where)
        with self._lock:
            self._seqs = seqs

    def page(self, offset: int, limit: int) -> list[dict[str, Any]]:
        """The rows from `offset`, at most `limit`."""
        if self.searching:
            while self._step(lambda: len(self._found) >= offset + limit):
                pass
            with self._lock:
                seqs = self._found[offset : offset + limit]
            return self._rows_at(seqs)
        if self._seqs is not None:
            return self._rows_at(self._seqs[offset : offset + limit])
        with self.session.store.read() as conn:
            events = journal_filter.page(conn, self.session.person, self._where, offset, limit)
            return rows_of(self.session, conn, events)

    def look(self, want: int, most: int) -> int:
        """Search on until `want` rows are found or about `most` more rows were looked at
        (a first page that never waits on the whole journal); the rows found so far."""
        start = self._looked
        while self._step(lambda: len(self._found) >= want or self._looked - start >= most):
            pass
        return len(self._found)

    def finish(self, progress: Progress | None = None, cancelled: Cancelled | None = None) -> int:
        """Search every remaining row; the total (what was found so far, if cancelled)."""
        while self._step(lambda: bool(cancelled and cancelled()), progress):
            pass
        return len(self._found)

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every row the filter lists, in journal order, a scan at a time (CSV, the CLI)."""
        after, person = 0, self.session.person
        while True:
            with self.session.store.read() as conn:
                events = journal_filter.after(conn, person, self._where, after, SCAN)
                rows = rows_of(self.session, conn, events)
            yield from (row for row in rows if self.filter.keeps(row))
            if len(events) < SCAN:
                return
            after = events[-1].seq

    def _step(self, enough: Callable[[], bool], progress: Progress | None = None) -> bool:
        """Look for the words in the next rows, unless `enough` or the end was reached;
        whether it looked. One step at a time under the lock, so a page already found is
        read while `finish` goes on."""
        with self._lock:
            if self._complete or enough():
                return False
            with self.session.store.read() as conn:
                events = journal_filter.after(
                    conn, self.session.person, self._where, self._scanned, SCAN
                )
                rows = rows_of(self.session, conn, events)
            self._found.extend(r["seq"] for r in rows if self.filter.keeps(r))
            if events:
                self._scanned = events[-1].seq
            self._looked += len(events)
            if len(events) < SCAN:
                self._complete = True
            looked = self._looked
        if progress is not None:
            progress(min(looked, self._sql_total), self._sql_total)
        return True

    def _rows_at(self, seqs: Any) -> list[dict[str, Any]]:
        with self.session.store.read() as conn:
            events = journal_filter.by_seqs(conn, self.session.person, list(seqs))
            return rows_of(self.session, conn, events)


def audit_actors(session: PersonSession) -> list[str]:
    """Who acted on the person's memory, most often first (the filter's choices)."""
    with session.store.read() as conn:
        return journal_filter.actors(conn, session.person)


def stream(session: PersonSession, audit_filter: AuditFilter) -> Iterator[dict[str, Any]]:
    """Every row the filter lists, in journal order (`engram audit`)."""
    return AuditPages(session, audit_filter).rows()


def csv_line(row: dict[str, Any]) -> list[str]:
    """A row as the CSV has it: people's words, with the ids beside them."""
    cause = row.get("cause") or {}
    notes = [link["id"] for link in row.get("links", ()) if link["kind"] == "note"]
    return [
        str(row["seq"]),
        row["at"] or "",
        actor_named(row["actor"]),
        row["actor"],
        row.get("said") or row["action"],
        row.get("reason") or "",
        row["type"],
        str(cause.get("conversation") or ""),
        str(cause.get("turn") or ""),
        " ".join(notes),
        row.get("candidate") or "",
    ]


def write_csv(
    session: PersonSession,
    audit_filter: AuditFilter,
    path: str | Path,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> Path | None:
    """Save the rows a filter lists as CSV, owner-only, whole or not at all, and record it in
    the audit log; None when cancelled (nothing written)."""
    ensure_recordable(session)
    pages = AuditPages(session, audit_filter)
    with PrivateFile(path, "CSV file") as file:
        text = io.StringIO()
        writer = csv.writer(text)
        writer.writerow(CSV_COLUMNS)
        for done, row in enumerate(pages.rows(), 1):
            writer.writerow(csv_line(row))
            if done % SCAN == 0:
                if cancelled is not None and cancelled():
                    return None
                file.write(text.getvalue().encode("utf-8"))
                text.seek(0)
                text.truncate()
                if progress is not None:
                    progress(min(done, pages.total), max(pages.total, done))
        file.write(text.getvalue().encode("utf-8"))
        file.finish()
        return publish_recorded(session, file, "audit_csv")
