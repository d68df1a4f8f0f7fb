"""Forensics: the audit log, export of everything kept about a person, and verify.

One of the five modules allowed the unscoped accessor (S5): an export must hold everything.

An export streams (issue 15 item 7): inside one read snapshot, its long lists — notes,
digest, candidates, conversations and each one's turns, the audit log — are read a page at
a time and written as they are read (control.json_stream), so its memory stays flat however
big the store is, and the JSON is the same as if it had been built whole.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from engram.control import candidates as candidate_control
from engram.control import notes as memory_control
from engram.control import wording
from engram.control.audit_sentences import Name, describe
from engram.control.export_record import ensure_recordable, publish_recorded, record_export
from engram.control.json_stream import Lazy, chunks, materialize
from engram.control.private_file import PrivateFile
from engram.control.session import PersonSession
from engram.control.verify_report import VerifyReport
from engram.control.views import NoteView, conversation_json
from engram.model.clock import iso
from engram.model.conversation import ConversationInfo, EntryKind
from engram.model.event_bodies import candidate_named
from engram.model.events import Event, EventType
from engram.model.ids import CandidateId
from engram.model.notes import EVERY_NOTE
from engram.model.progress import Progress
from engram.runtime.note_writes import read_suggestion
from engram.store import conversation_log, journal, projection_notes, projection_state
from engram.store.store import Store
from engram.store.verify import Cancelled, verify

PAGE = 200  # rows read, decrypted and held at once by an export: notes, turns, entries
SAID_CHARS = 60  # a note quoted in the audit log's words

_TEXT_EVENTS = {
    EventType.DELETED: "reason",
    EventType.DIGEST_LINE_ADDED: "line",
    EventType.CANDIDATE_REVIEWED: "reason",
}
_CANDIDATE_EVENTS = (
    EventType.CANDIDATE_SUGGESTED,
    EventType.CANDIDATE_REVIEWED,
    EventType.CANDIDATE_APPLIED,
    EventType.REVIEW_IMPORTED,  # an offline reviewer's decision, come back (issue 21)
    EventType.UNDONE,  # a decision on it undone (issue 21 item 8); other undos name none
)


# ---- the audit log ----------------------------------------------------------------------


def audit_log(session: PersonSession, *, limit: int | None = None) -> list[dict[str, Any]]:
    """The person's journal as a readable log: time, actor, action, cause (newest last).

    `action` names notes by id (the command line); `said` quotes their words, and
    `cause_started` says when the conversation that caused an event began (the inspector)."""
    with session.store.read() as conn:
        after = 0 if limit is None else max(0, journal.head_seq(conn, session.person) - limit)
        return _audit_rows(
            session, conn, list(journal.events(conn, session.person, after_seq=after))
        )


def audit_rows(session: PersonSession, conn: Any, events: list[Event]) -> list[dict[str, Any]]:
    """Some events as rows of the audit log (the audit workspace reads them a page at a
    time, control.audit_log)."""
    return _audit_rows(session, conn, events)


def _audit_pages(session: PersonSession, conn: Any) -> Iterator[dict[str, Any]]:
    """The whole audit log, a page of events at a time (an export)."""
    after = 0
    while events := list(journal.events(conn, session.person, after_seq=after, limit=PAGE)):
        yield from _audit_rows(session, conn, events)
        after = events[-1].seq


def _audit_rows(session: PersonSession, conn: Any, events: list[Event]) -> list[dict[str, Any]]:
    store, person = session.store, session.person
    texts = journal.texts(store, conn, person, [e.seq for e in events if e.type in _TEXT_EVENTS])
    causes = [e.cause.conversation for e in events if e.cause is not None]
    started = conversation_log.started_at(conn, person, causes)
    quoted = _quoting(session, conn, events)
    suggestion = _suggestions(session, conn, events)
    rows = []
    for event in events:
        cause = event.cause.to_json() if event.cause else None
        row: dict[str, Any] = {
            "seq": event.seq,
            "at": iso(event.at),
            "actor": event.actor,
            "type": event.type.value,
            "action": describe(event),
            # Notes and suggestions by their words, and no ids, for people (issue 17 item 13).
            "said": describe(event, quoted, quoted, candidate=suggestion, people=True),
            "cause": cause,
            "cause_started": iso(started.get(str((cause or {}).get("conversation")))),
        }
        label = _TEXT_EVENTS.get(event.type)
        if label and texts.get(event.seq):
            row[label] = texts[event.seq]
        rows.append(row)
    return rows


def _quoting(session: PersonSession, conn: Any, events: list[Event]) -> Name:
    """Names a note by its words ("“Lives in Grenoble.”"), for the audit log people read."""
    ids = {note for event in events for note in event.body.named_notes()}
    notes = projection_notes.unscoped_notes_by_ids(conn, session.person, sorted(ids))
    found = journal.texts(session.store, conn, session.person, [n.text_seq for n in notes])
    texts = {str(n.id): found.get(n.text_seq) for n in notes}

    def quoted(note: str) -> str:
        if note not in texts:
            return "a note no longer kept"
        return wording.quoted(texts[note], SAID_CHARS)

    return quoted


def _suggestions(session: PersonSession, conn: Any, events: list[Event]) -> Name:
    """Names a suggestion (candidate) by its words, for the audit log people read."""
    ids = sorted({str(candidate_named(e.body)) for e in events if e.type in _CANDIDATE_EVENTS})
    seqs: dict[str, int] = {}
    for candidate_id in ids:
        state = projection_state.candidate(conn, session.person, CandidateId(candidate_id))
        if state is not None:
            seqs[candidate_id] = state.payload_seq
    found = journal.texts(session.store, conn, session.person, list(seqs.values()))
    texts = {c: read_suggestion(found.get(seq)).text for c, seq in seqs.items()}

    def named(candidate_id: str) -> str:
        if candidate_id not in texts:
            return "no longer kept"
        text = texts[candidate_id]
        return "whose words were removed" if text is None else wording.quoted(text, SAID_CHARS)

    return named


# ---- the export -------------------------------------------------------------------------


class ExportCancelled(Exception):
    """The export was asked to stop (a lock in the inspector): nothing was written."""


class _Steps:
    """Progress over the person's conversations, and the cancel flag polled on every page."""

    def __init__(self, total: int, progress: Progress | None, cancelled: Cancelled | None) -> None:
        self.total, self.done = total, 0
        self._progress, self._cancelled = progress, cancelled

    def check(self) -> None:
        if self._cancelled is not None and self._cancelled():
            raise ExportCancelled

    def advance(self) -> None:
        self.done += 1
        if self._progress is not None:
            self._progress(self.done, self.total)


def _document(session: PersonSession, conn: Any, steps: _Steps) -> dict[str, Any]:
    """Everything kept about the person, its long lists still to be read (Lazy). The keys
    and their order are the CLI contract's `engram export` JSON."""
    store, person = session.store, session.person
    return {
        "person": person,
        "exported_at": iso(store.now()),
        "exported_by": session.actor,
        "notes": Lazy(_notes(session, conn, steps)),
        "note_count": projection_notes.count_notes(conn, person, EVERY_NOTE),
        "digest": Lazy(_digest(session, conn, steps)),
        "usage_events": projection_state.usage_count(conn, person),
        "candidates": Lazy(_checked(candidate_control.every_candidate(session, conn, PAGE), steps)),
        "profile": memory_control.profile_document_in(session, conn),
        "conversations": Lazy(_conversations(session, conn, steps)),
        "audit": Lazy(_checked(_audit_pages(session, conn), steps)),
    }


def _checked(rows: Iterator[dict[str, Any]], steps: _Steps) -> Iterator[dict[str, Any]]:
    for index, row in enumerate(rows):
        if index % PAGE == 0:
            steps.check()
        yield row


def _notes(session: PersonSession, conn: Any, steps: _Steps) -> Iterator[dict[str, Any]]:
    """Every note, any status, with text, in creation order (as control.notes.all_notes)."""
    store, person = session.store, session.person
    after: tuple[int, str] | None = None
    while notes := projection_notes.unscoped_notes_after(conn, person, EVERY_NOTE, after, PAGE):
        steps.check()
        texts = journal.texts(store, conn, person, [n.text_seq for n in notes])
        yield from (NoteView(n, texts.get(n.text_seq)).to_json() for n in notes)
        after = (notes[-1].created_seq, notes[-1].id)


def _digest(session: PersonSession, conn: Any, steps: _Steps) -> Iterator[dict[str, Any]]:
    store, person = session.store, session.person
    after = 0
    while lines := projection_state.digest_after(conn, person, after, PAGE):
        steps.check()
        texts = journal.texts(store, conn, person, [d.seq for d in lines])
        for d in lines:
            yield {"at": iso(d.at), "conversation": d.conversation, "text": texts.get(d.seq)}
        after = lines[-1].seq


def _conversations(session: PersonSession, conn: Any, steps: _Steps) -> Iterator[dict[str, Any]]:
    """One conversation at a time, oldest first, each with its turns a page at a time."""
    after: ConversationInfo | None = None
    while infos := conversation_log.for_person(conn, session.person, after=after, limit=PAGE):
        for info in infos:
            steps.check()
            yield {
                **conversation_json(info, session.person),
                "turns": Lazy(_turns(session, conn, info, steps)),
            }
            steps.advance()
        after = infos[-1]


def _turns(
    session: PersonSession, conn: Any, info: ConversationInfo, steps: _Steps
) -> Iterator[dict[str, Any]]:
    after = 0
    while entries := conversation_log.entries(conn, info.id, after, PAGE):
        steps.check()
        turns = [e for e in entries if e.kind in (EntryKind.USER, EntryKind.ASSISTANT)]
        texts = conversation_log.entry_texts(session.store, conn, info.id, [e.seq for e in turns])
        for e in turns:
            yield {
                "turn": e.ref,
                "role": e.kind.value,
                "author": e.author,
                "at": iso(e.at),
                "status": e.status,
                "text": texts.get(e.seq),
            }
        after = entries[-1].seq


def _stream(
    session: PersonSession,
    write: Callable[[str], object],
    *,
    ensure_ascii: bool = False,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> None:
    """Write the export's JSON text (and a final newline) through `write`, piece by piece,
    from one read snapshot."""
    with session.store.read() as conn:
        total = conversation_log.count_for_person(conn, session.person)
        steps = _Steps(total, progress, cancelled)
        for piece in chunks(_document(session, conn, steps), ensure_ascii=ensure_ascii):
            write(piece)
    write("\n")


def export_person(session: PersonSession) -> dict[str, Any]:
    """Everything kept about a person, decrypted, as one JSON-ready document, held whole
    (tests and library hosts; the faces stream it with `write_export` / `export_to`, which
    also record it). Nothing is recorded here."""
    with session.store.read() as conn:
        steps = _Steps(0, None, None)
        document: dict[str, Any] = materialize(_document(session, conn, steps))
        return document


def write_export(
    session: PersonSession,
    path: str | Path,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> Path | None:
    """Stream the export as JSON into a file at `path`, owner-only (0600), and record it in
    the person's audit log. The file is not encrypted. Written whole or not at all
    (control.private_file); None, with nothing written or recorded, when `cancelled`
    says stop."""
    ensure_recordable(session)
    with PrivateFile(path, "export") as file:
        try:
            _stream(
                session,
                lambda piece: file.write(piece.encode("utf-8")),
                progress=progress,
                cancelled=cancelled,
            )
        except ExportCancelled:
            return None
        file.finish()
        return publish_recorded(session, file, "export")


def export_to(session: PersonSession, out: IO[str]) -> None:
    """Stream the export as JSON to a text stream (the CLI's standard output), then record
    it. Characters the stream's encoding cannot carry are written as \\u escapes."""
    ensure_recordable(session)  # before a byte goes out
    encoding = getattr(out, "encoding", None) or "utf-8"
    ensure_ascii = not codecs.lookup(encoding).name.startswith("utf")
    _stream(session, out.write, ensure_ascii=ensure_ascii)
    out.flush()  # all of it is out before the audit log says so
    record_export(session, "export", "stdout")


# ---- verify -----------------------------------------------------------------------------


def verify_store(
    store: Store, progress: Progress | None = None, cancelled: Cancelled | None = None
) -> VerifyReport:
    """Walk every chain and signature, replay every journal, check the checkpoint; the
    report carries the verdict every face prints."""
    return VerifyReport.of(verify(store, progress, cancelled))
