"""Forensics: the audit log, export of everything kept about a person, and verify.

One of the five modules allowed the unscoped accessor (S5): an export must hold everything.
"""

from __future__ import annotations

import json
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
from engram.store import conversation_log, journal, projection_memory, projection_state
from engram.store.store import Store
from engram.store.verify import Cancelled, Progress, VerifyReport, verify

_TEXT_EVENTS = {EventType.DELETED: "reason", EventType.DIGEST_LINE_ADDED: "line"}


def _describe(event: Event) -> str:
    body = event.body
    match event.type:
        case EventType.NOTE_ADDED:
            return f"added {body['kind']} note {body['note']} ({body['scope']})"
        case EventType.RESTATED:
            return f"restated note {body['note']}"
        case EventType.CONTRADICTED:
            return f"note {body['old']} contradicted by {body['new']}"
        case EventType.CORRECTED:
            return f"note {body['old']} corrected as {body['note']}"
        case EventType.SCOPE_CHANGED:
            return f"note {body['note']} made {body['scope']}"
        case EventType.DELETED:
            return f"deleted note {body['note']}"
        case EventType.CONVERSATION_DELETED:
            return (
                f"conversation {body['conversation']} deleted: "
                f"{len(body.get('closed', []))} notes closed"
            )
        case EventType.REOPENED:
            return f"note {body['note']} reopened: {body['after']}, which contradicted it, went"
        case EventType.ITEM_USED:
            return f"{len(body['notes'])} notes used via {body.get('via', 'assembly')}"
        case EventType.UNDONE:
            return _describe_undo(body)
        case _:
            return event.type.value.replace("_", " ")


def _describe_undo(body: Any) -> str:
    undid = f"undid event {body['undoes']}"
    match body["action"]:
        case "edit":
            closed = f"note {body['note']} closed"
            return f"{undid} (an edit): {closed}, {body['restored']} restored as {body['new']}"
        case "rescope":
            return f"{undid} (a change of scope): note {body['note']} back to {body['scope']}"
        case _:
            return f"{undid} (a deletion): note {body['restored']} restored as {body['new']}"


def audit_log(session: PersonSession, *, limit: int | None = None) -> list[dict[str, Any]]:
    """The person's journal as a readable log: time, actor, action, cause (newest last)."""
    store, person = session.store, session.person
    with store.read() as conn:
        after = 0 if limit is None else max(0, journal.head_seq(conn, person) - limit)
        events = list(journal.events(conn, person, after_seq=after))
        texts = journal.texts(
            store, conn, person, [e.seq for e in events if e.type in _TEXT_EVENTS]
        )
    rows = []
    for event in events:
        row: dict[str, Any] = {
            "seq": event.seq,
            "at": iso(event.at),
            "actor": event.actor,
            "type": event.type.value,
            "action": _describe(event),
            "cause": event.cause.to_json() if event.cause else None,
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
