"""A person's access report: everything kept about them, gathered for a readable document.

Support staff hand it over when someone asks what is kept about them. It holds every note
(any status) with its validity, scope and provenance, the conversations (date, people,
first words), the candidates, the profile and digest, the audit log, and the verify and
erasure status. This gathers the data (Qt-free); the inspector renders it (gui).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engram.control import candidates as candidate_control
from engram.control import notes as memory_control
from engram.control.forensics import audit_log, verify_store
from engram.control.session import PersonSession
from engram.control.views import NoteView
from engram.control.wording import counted, verb
from engram.model.conversation import ConversationInfo, EntryKind
from engram.model.events import EventType
from engram.model.ids import ConversationId, NoteId, PersonId
from engram.model.progress import Progress
from engram.store import conversation_log, erasure, journal, projection_state

FIRST_WORDS = 80
SOURCE_WORDS = 40

CLOSED_BY = {
    EventType.CONTRADICTED: "a contradiction",
    EventType.CORRECTED: "an edit",
    EventType.DELETED: "a deletion",
    EventType.RETIRED: "expiry (it was short-lived)",
    EventType.MERGED: "a merge",
    EventType.DUPLICATE_REMOVED: "removal as a duplicate",
    EventType.CONVERSATION_DELETED: "the deletion of its conversation",
    EventType.UNDONE: "an undo",
}


@dataclass(frozen=True, slots=True)
class ReportNote:
    """One note: what it says, how it may be used, when it held, and where it came from."""

    view: NoteView
    sources: tuple[str, ...]  # "conversation of 3 Mar 2026 (turn t_…)" lines
    closed: str | None  # "Closed by “Lives in Grenoble.” — a contradiction, 3 Mar 2026"


@dataclass(frozen=True, slots=True)
class ReportConversation:
    """A conversation the person takes part in."""

    info: ConversationInfo
    first_words: str | None
    turns: int
    removed_tool_results: int


@dataclass(frozen=True, slots=True)
class DeletedConversation:
    """A conversation of the person's that was deleted (its text and key destroyed)."""

    conversation: ConversationId
    at: datetime
    actor: str
    notes_closed: int
    rows_deleted: int | None  # from the store's content-free erasure record


@dataclass
class AccessReport:
    """Everything kept about one person, ready to render."""

    person: PersonId
    store_id: str
    generated_at: datetime
    generated_by: str
    notes: list[ReportNote]
    conversations: list[ReportConversation]
    candidates: list[dict[str, Any]]
    profile: str
    digest: list[tuple[datetime, str | None]]
    usage_events: int
    audit: list[dict[str, Any]]
    verify_ok: bool
    verify_entries: int
    verify_problems: list[str]
    deleted_conversations: list[DeletedConversation] = field(default_factory=list)
    notes_without_text: int = 0

    @property
    def verify_sentence(self) -> str:
        """The verify status in one sentence."""
        if self.verify_ok:
            return (
                f"Verified: all {self.verify_entries:,} entries of the store's chains and "
                "signatures check out, and the notes equal a replay of the journal."
            )
        return f"Verify found {counted(len(self.verify_problems), 'problem')}; see below."

    @property
    def erasure_sentence(self) -> str:
        """The erasure status in one sentence."""
        gone = len(self.deleted_conversations)
        head = f"{self.person} has not been erased: everything listed here is still kept."
        if not gone:
            return head
        return (
            f"{head} {gone} of their conversations {verb(gone, 'was', 'were')} deleted: their "
            f"text and keys are destroyed, and {counted(self.notes_without_text, 'note')} "
            f"that came from them no longer {verb(self.notes_without_text, 'has', 'have')} "
            "readable text."
        )


def _date(moment: datetime) -> str:
    return f"{moment.day} {moment:%b %Y}"


def gather(
    session: PersonSession,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> AccessReport:
    """Everything kept about the session's person, with a fresh verify of the store."""
    store, person = session.store, session.person
    views = memory_control.all_notes(session)
    texts = {v.note.id: v.text for v in views}
    with store.read() as conn:
        infos = conversation_log.for_person(conn, person)
        conversations = [_conversation(session, conn, info) for info in infos]
        digest = projection_state.recent_digest(conn, person, 1 << 30)
        digest_texts = journal.texts(store, conn, person, [d.seq for d in digest])
        usage_events = projection_state.usage_count(conn, person)
        deletions = list(journal.events_of_types(conn, person, [EventType.CONVERSATION_DELETED]))
        records = {r.get("subject"): r for r in erasure.erasure_records(conn)}
    started = {c.info.id: _label(c) for c in conversations}
    deleted = [
        DeletedConversation(
            ConversationId(e.body["conversation"]),
            e.at,
            e.actor,
            len(e.body.get("closed", [])),
            _rows(records.get(store.hidden_name(e.body["conversation"]))),
        )
        for e in deletions
    ]
    gone = {d.conversation for d in deleted}
    notes = [_note(v, texts, started, gone) for v in views]
    verified = verify_store(store, progress, cancelled)
    return AccessReport(
        person=person,
        store_id=store.info.id,
        generated_at=store.now(),
        generated_by=session.actor,
        notes=notes,
        conversations=conversations,
        candidates=candidate_control.list_candidates(session),
        profile=memory_control.profile_document(session),
        digest=[(d.at, digest_texts.get(d.seq)) for d in sorted(digest, key=lambda d: d.seq)],
        usage_events=usage_events,
        audit=audit_log(session),
        verify_ok=verified.ok and not verified.cancelled,
        verify_entries=verified.entries,
        verify_problems=list(verified.problems)
        + (["Verify was cancelled before it finished."] if verified.cancelled else []),
        deleted_conversations=deleted,
        notes_without_text=sum(1 for v in views if v.text is None),
    )


def _rows(record: dict[str, Any] | None) -> int | None:
    if record is None:
        return None
    return sum(int(n) for n in record.get("rows", {}).values())


def _conversation(session: PersonSession, conn: Any, info: ConversationInfo) -> ReportConversation:
    entries = conversation_log.entries(conn, info.id)
    turns = [e for e in entries if e.kind in (EntryKind.USER, EntryKind.ASSISTANT)]
    removed = sum(1 for e in entries if e.kind is EntryKind.EXCISION)
    first = None
    if turns:
        found = conversation_log.entry_texts(session.store, conn, info.id, [turns[0].seq])
        text = found.get(turns[0].seq)
        if text is not None:
            first = text if len(text) <= FIRST_WORDS else text[: FIRST_WORDS - 1].rstrip() + "…"
    return ReportConversation(info, first, len(turns), removed)


def _label(conversation: ReportConversation) -> tuple[str, str]:
    """How a note's provenance names a conversation: its date and first words."""
    started = _date(conversation.info.created_at)
    words = conversation.first_words or ""
    if len(words) > SOURCE_WORDS:
        words = words[: SOURCE_WORDS - 1].rstrip() + "…"
    return started, f"the conversation of {started}" + (f" (“{words}”)" if words else "")


def _note(
    view: NoteView,
    texts: dict[NoteId, str | None],
    started: dict[ConversationId, tuple[str, str]],
    gone: set[ConversationId],
) -> ReportNote:
    note = view.note
    sources = []
    for source in note.sources:
        said = _date(source.at)
        if source.conversation in started:
            date, where = started[source.conversation]
            sources.append(where if said == date else f"{where}, said again {said}")
        elif source.conversation in gone:
            sources.append(f"a conversation since deleted, {said}")
        else:
            sources.append(f"conversation {source.conversation}, {said}")
    if not sources:
        sources.append(f"written by {note.actor}, {_date(note.valid_from)}")
    closed = None
    if note.closure is not None:
        how = CLOSED_BY.get(note.closure.type, note.closure.type.value.replace("_", " "))
        by = texts.get(note.closure.by_note) if note.closure.by_note else None
        closer = f"Closed by “{by}” — {how}" if by else f"Closed by {how}"
        closed = f"{closer}, {_date(note.closure.at)}, by {note.closure.actor}"
    return ReportNote(view, tuple(sources), closed)
