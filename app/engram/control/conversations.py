"""Deleting a conversation, with a preview of which notes close and which survive (C4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.control.views import NoteView
from engram.model.errors import NotAllowed
from engram.model.events import EventType as E
from engram.model.events import NewEvent
from engram.model.ids import ConversationId, PersonId
from engram.runtime.conversations import require_conversation
from engram.store import erasure, journal
from engram.store.erasure import Shredded


@dataclass
class Cascade:
    """What deleting a conversation does to one person's notes."""

    person: PersonId
    closes: list[NoteView] = field(default_factory=list)
    survives: list[NoteView] = field(default_factory=list)


@dataclass
class ConversationDeletion:
    """The preview, or the result, of deleting a conversation."""

    conversation: ConversationId
    cascade: Cascade
    others_closing: int = 0
    done: bool = False
    report: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """As printed by `engram conversation delete --json`."""
        return {
            "conversation": self.conversation,
            "person": self.cascade.person,
            "deleted": self.done,
            "closes": [v.to_json() for v in self.cascade.closes],
            "survives": [v.to_json() for v in self.cascade.survives],
            "other_participants_notes_closing": self.others_closing,
            **({"report": self.report} if self.done else {}),
        }


def _cascade(session: PersonSession, conversation: ConversationId) -> Cascade:
    cascade = Cascade(session.person)
    for view in memory_control.notes_touching(session, conversation):
        if not view.note.is_active:
            continue
        if view.note.origin == conversation:
            cascade.closes.append(view)
        else:
            cascade.survives.append(view)
    return cascade


def preview_delete(session: PersonSession, conversation: ConversationId) -> ConversationDeletion:
    """Which of this person's notes would close, which survive, and how many of others'."""
    info = require_conversation(session.store, conversation)
    if session.person not in info.participants:
        raise NotAllowed(f"{session.person} is not a participant of conversation {conversation}.")
    others = 0
    for person in info.participants:
        if person == session.person:
            continue
        other = PersonSession(session.store, person, session.actor)
        others += len(_cascade(other, conversation).closes)
    return ConversationDeletion(conversation, _cascade(session, conversation), others)


def delete_conversation(
    session: PersonSession, conversation: ConversationId
) -> ConversationDeletion:
    """Delete the conversation for everyone in it: its log and key go, notes whose text
    originated there close (their text is shredded), corroborated notes lose it as a source.
    """
    preview = preview_delete(session, conversation)
    store = session.store
    info = require_conversation(store, conversation)
    tally = Shredded()
    cascades = {
        person: _cascade(PersonSession(store, person, session.actor), conversation)
        for person in info.participants
    }
    with store.write() as txn:
        for person, cascade in cascades.items():
            shredded, removed = erasure.shred_note_payloads(txn.conn, person, conversation)
            tally.merge(removed)
            body = {
                "conversation": conversation,
                "closed": [v.note.id for v in cascade.closes],
                "trimmed": [v.note.id for v in cascade.survives],
                "shredded": shredded,
            }
            journal.append(
                store, txn, person, [NewEvent(E.CONVERSATION_DELETED, session.actor, body)]
            )
        tally.merge(erasure.shred_conversation(store, txn, conversation))
        erasure.record_erasure(
            store,
            txn,
            session.actor,
            {
                "kind": "conversation",
                "subject": store.hidden_name(conversation),
                "rows": tally.rows_deleted,
            },
        )
    preview.done = True
    preview.report = {
        "keys_destroyed": tally.keys_destroyed,
        "rows_deleted": tally.rows_deleted,
        **txn.after_erasure,
        "raw_file_scan": erasure.scan_files(store, tally.needles),
    }
    return preview
