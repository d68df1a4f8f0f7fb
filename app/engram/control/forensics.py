"""Forensics: the audit log, export of everything kept about a person, and verify.

One of the five modules allowed the unscoped accessor (S5): an export must hold everything.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engram.control import candidates as candidate_control
from engram.control import notes as memory_control
from engram.control.private_file import write_private
from engram.control.session import PersonSession
from engram.control.views import conversation_json
from engram.engine.unscoped import unscoped_notes
from engram.model.clock import iso
from engram.model.conversation import EntryKind
from engram.model.events import Event, EventType
from engram.model.ids import NoteId
from engram.store import conversation_log, journal, projection_memory, projection_state
from engram.store.store import Store
from engram.store.verify import Cancelled, Progress, VerifyReport, verify

_TEXT_EVENTS = {EventType.DELETED: "reason", EventType.DIGEST_LINE_ADDED: "line"}


Name = Callable[[str], str]
SAID_CHARS = 60  # a note quoted in the audit log's words


def _describe(event: Event, first: Name = lambda n: f"note {n}", other: Name = str) -> str:
    """What an event did. Notes are named by `first` where a sentence starts with one and
    by `other` after that: by id ("note n_1 corrected as n_2"), or, for people, by their
    words (see `_quoting`)."""
    body = event.body
    match event.type:
        case EventType.NOTE_ADDED:
            kind = str(body["kind"]).replace("_", " ")
            return f"added {kind} {first(body['note'])} ({body['scope']})"
        case EventType.RESTATED:
            return f"restated {first(body['note'])}"
        case EventType.CONTRADICTED:
            return f"{first(body['old'])} contradicted by {other(body['new'])}"
        case EventType.CORRECTED:
            return f"{first(body['old'])} corrected as {other(body['note'])}"
        case EventType.SCOPE_CHANGED:
            return f"{first(body['note'])} made {body['scope']}"
        case EventType.DELETED:
            return f"deleted {first(body['note'])}"
        case EventType.RETIRED:
            return f"retired {first(body['note'])}, a passing note whose time was up"
        case EventType.DUPLICATE_REMOVED:
            return f"removed {first(body['note'])}, a duplicate of {other(body['kept'])}"
        case EventType.MERGED:
            return f"{len(body['merged'])} notes merged into {other(body['into'])}"
        case EventType.CONVERSATION_DELETED:
            return (
                f"conversation {body['conversation']} deleted: "
                f"{len(body.get('closed', []))} notes closed"
            )
        case EventType.REOPENED:
            return (
                f"{first(body['note'])} reopened: {other(body['after'])}, which contradicted "
                "it, went"
            )
        case EventType.ITEM_USED:
            return f"{len(body['notes'])} notes used via {body.get('via', 'assembly')}"
        case EventType.UNDONE:
            return _describe_undo(body, first, other)
        case _:
            return event.type.value.replace("_", " ")


def _describe_undo(body: Any, first: Name, other: Name) -> str:
    undid = f"undid event {body['undoes']}"

    def back(name: Name) -> str:
        restored, new = name(body["restored"]), other(body["new"])
        return f"{restored} restored" + (f" as {new}" if new != restored else "")

    match body["action"]:
        case "edit":
            return f"{undid} (an edit): {first(body['note'])} closed, {back(other)}"
        case "rescope":
            return f"{undid} (a change of scope): {first(body['note'])} back to {body['scope']}"
        case _:
            return f"{undid} (a deletion): {back(first)}"


_NOTE_KEYS = ("note", "old", "new", "restored", "after", "kept", "into")


def _quoting(session: PersonSession, events: list[Event]) -> Name:
    """Names a note by its words ("“Lives in Grenoble.”"), for the audit log people read."""
    ids = {
        NoteId(value)
        for event in events
        for key in _NOTE_KEYS
        if isinstance(value := event.body.get(key), str) and value
    }
    notes = memory_control.notes_by_ids(session, sorted(ids))
    texts: dict[str, str | None] = {
        str(note): text for note, text in memory_control.texts_of(session, notes).items()
    }

    def quoted(note: str) -> str:
        if note not in texts:
            return f"note {note}"
        text = texts[note]
        if text is None:
            return "a note whose words were removed"
        if len(text) > SAID_CHARS:
            text = text[: SAID_CHARS - 1].rstrip() + "…"
        return f"“{text}”"

    return quoted


def audit_log(session: PersonSession, *, limit: int | None = None) -> list[dict[str, Any]]:
    """The person's journal as a readable log: time, actor, action, cause (newest last).

    `action` names notes by id (the command line); `said` quotes their words, and
    `cause_started` says when the conversation that caused an event began (the inspector)."""
    store, person = session.store, session.person
    with store.read() as conn:
        after = 0 if limit is None else max(0, journal.head_seq(conn, person) - limit)
        events = list(journal.events(conn, person, after_seq=after))
        texts = journal.texts(
            store, conn, person, [e.seq for e in events if e.type in _TEXT_EVENTS]
        )
        started = {str(c.id): c.created_at for c in conversation_log.for_person(conn, person)}
    quoted = _quoting(session, events)
    rows = []
    for event in events:
        cause = event.cause.to_json() if event.cause else None
        row: dict[str, Any] = {
            "seq": event.seq,
            "at": iso(event.at),
            "actor": event.actor,
            "type": event.type.value,
            "action": _describe(event),
            "said": _describe(event, quoted, quoted),  # notes by their words, for people
            "cause": cause,
            "cause_started": iso(started.get(str((cause or {}).get("conversation")))),
        }
        label = _TEXT_EVENTS.get(event.type)
        if label and texts.get(event.seq):
            row[label] = texts[event.seq]
        rows.append(row)
    return rows


def export_person(session: PersonSession) -> dict[str, Any]:
    """Everything kept about a person, decrypted, as one JSON-ready document."""
    store, person = session.store, session.person
    conversations = []
    with store.read() as conn:
        infos = conversation_log.for_person(conn, person)
        digest = projection_state.recent_digest(conn, person, 1 << 30)
        digest_texts = journal.texts(store, conn, person, [d.seq for d in digest])
        memory = projection_memory.unscoped_memory(conn, person)
        for info in infos:
            entries = conversation_log.entries(conn, info.id)
            texts = conversation_log.entry_texts(store, conn, info.id, [e.seq for e in entries])
            conversations.append(
                {
                    **conversation_json(info, person),
                    "turns": [
                        {
                            "turn": e.ref,
                            "role": e.kind.value,
                            "author": e.author,
                            "at": iso(e.at),
                            "status": e.status,
                            "text": texts.get(e.seq),
                        }
                        for e in entries
                        if e.kind in (EntryKind.USER, EntryKind.ASSISTANT)
                    ],
                }
            )
    usage_count = sum(len(v) for v in memory.usage.values())
    return {
        "person": person,
        "exported_at": iso(store.now()),
        "exported_by": session.actor,
        "notes": [v.to_json() for v in memory_control.all_notes(session)],
        "note_count": len(unscoped_notes(memory)),
        "digest": [
            {"at": iso(d.at), "conversation": d.conversation, "text": digest_texts.get(d.seq)}
            for d in sorted(digest, key=lambda d: d.seq)
        ],
        "usage_events": usage_count,
        "candidates": candidate_control.list_candidates(session),
        "profile": memory_control.profile_document(session),
        "conversations": conversations,
        "audit": audit_log(session),
    }


def write_export(session: PersonSession, path: str | Path) -> Path:
    """Write `export_person` as JSON to `path`, readable and writable by its owner only
    (0600). The file is not encrypted. Written whole or not at all (control.private_file)."""
    text = json.dumps(export_person(session), indent=2, ensure_ascii=False)
    return write_private(path, text.encode("utf-8"), "export")


def verify_store(
    store: Store, progress: Progress | None = None, cancelled: Cancelled | None = None
) -> VerifyReport:
    """Walk every chain and signature, replay every journal, check the checkpoint."""
    return verify(store, progress, cancelled)
