"""Deleting a conversation, with a preview of which notes close and which survive (C4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.control.views import NoteView
from engram.control.wording import actor_named, conversation_named, quoted
from engram.model.conversation import EntryKind
from engram.model.errors import NotAllowed
from engram.model.events import EventType as E
from engram.model.events import NewEvent
from engram.model.ids import ConversationId, PersonId
from engram.model.notes import Note
from engram.runtime.conversations import require_conversation
from engram.runtime.note_writes import reopened_after
from engram.store import conversation_log, erasure, journal, pending_erasure
from engram.store.erasure import Shredded


@dataclass(frozen=True, slots=True)
class CascadeNote:
    """One note in a cascade, and why deleting the conversation does what it does to it."""

    view: NoteView
    reason: str

    @property
    def note(self) -> Note:
        """The note as it stands before the deletion."""
        return self.view.note

    @property
    def text(self) -> str | None:
        """Its text (None when already gone)."""
        return self.view.text

    def to_json(self) -> dict[str, Any]:
        """The note's JSON plus the reason."""
        return {**self.view.to_json(), "reason": self.reason}


@dataclass
class Cascade:
    """What deleting a conversation does to one person's notes: which close, which survive
    (losing it as a source) and which reopen (what they were contradicted by closes)."""

    person: PersonId
    closes: list[CascadeNote] = field(default_factory=list)
    survives: list[CascadeNote] = field(default_factory=list)
    reopens: list[CascadeNote] = field(default_factory=list)


@dataclass
class ConversationDeletion:
    """The preview, or the result, of deleting a conversation."""

    conversation: ConversationId
    cascade: Cascade
    others_closing: int = 0
    done: bool = False
    report: dict[str, Any] = field(default_factory=dict)
    # The conversation in words ("the conversation of 3 Nov with maya and sam").
    named: str = ""

    def to_json(self) -> dict[str, Any]:
        """As printed by `engram conversation delete --json`."""
        return {
            "conversation": self.conversation,
            "person": self.cascade.person,
            "deleted": self.done,
            "closes": [v.to_json() for v in self.cascade.closes],
            "survives": [v.to_json() for v in self.cascade.survives],
            "reopens": [v.to_json() for v in self.cascade.reopens],
            "other_participants_notes_closing": self.others_closing,
            **({"report": self.report} if self.done else {}),
        }


def named_conversation(session: PersonSession, conversation: str) -> str:
    """A conversation by its day and people ("the conversation of 3 Nov with maya and
    sam"), never its id (issue 17 item 13)."""
    with session.store.read() as conn:
        info = conversation_log.get(conn, ConversationId(conversation))
    if info is None:
        return conversation_named(None)
    return conversation_named(info.created_at, info.participants)


def why_it_survives(session: PersonSession, note: Note, conversation: ConversationId) -> str:
    """The true reason a note touching a conversation outlives its deletion (C4), naming
    the other conversation and the author in words."""
    if note.origin is not None:
        return (
            f"its text comes from {named_conversation(session, note.origin)}; this one only "
            "restated it, so it loses this conversation as a source"
        )
    if note.supersedes is not None:
        learned = bool(note.sources) and note.sources[0].conversation == conversation
        where = "it was learned here, but" if learned else "this conversation restated it, but"
        return (
            f"{where} its text is now an edit by {actor_named(note.actor)}, which this "
            "conversation does not hold; it loses this conversation as a source"
        )
    return (
        f"its text was written by {actor_named(note.actor)}, not taken from this "
        "conversation, which only restated it; it loses this conversation as a source"
    )


def _cascade(session: PersonSession, conversation: ConversationId) -> Cascade:
    cascade = Cascade(session.person)
    for view in memory_control.notes_touching(session, conversation):
        if not view.note.is_active:
            continue
        if view.note.origin == conversation:
            reason = "its text comes from this conversation, so it goes with it"
            cascade.closes.append(CascadeNote(view, reason))
        else:
            reason = why_it_survives(session, view.note, conversation)
            cascade.survives.append(CascadeNote(view, reason))
    closing = {c.note.id: c.text for c in cascade.closes}
    for view, after in memory_control.reopening(session, list(closing), conversation):
        reason = (
            f"{quoted(closing.get(after))}, which contradicted it, goes with this "
            "conversation, so what was known before holds again"
        )
        cascade.reopens.append(CascadeNote(view, reason))
    return cascade


def _sentence_start(words: str) -> str:
    return words[:1].upper() + words[1:]


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
    named = conversation_named(info.created_at, info.participants)
    return ConversationDeletion(conversation, _cascade(session, conversation), others, named=named)


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
            shredded, removed = erasure.shred_note_payloads(txn, person, conversation)
            tally.merge(removed)
            closed = [v.note.id for v in cascade.closes]
            body = {
                "conversation": conversation,
                "closed": closed,
                "trimmed": [v.note.id for v in cascade.survives],
                "shredded": shredded,
            }
            reopen = reopened_after(txn.conn, person, closed, session.actor, None, [conversation])
            deleted = NewEvent(E.CONVERSATION_DELETED, session.actor, body)
            journal.append(store, txn, person, [deleted, *reopen])
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
    finished = pending_erasure.finish_or_raise(
        store,
        f"{_sentence_start(preview.named or 'the conversation')} was deleted (its key "
        "destroyed, its rows gone)",
    )
    preview.done = True
    preview.report = {
        "keys_destroyed": tally.keys_destroyed,
        "rows_deleted": tally.rows_deleted,
        **finished.to_json(),
    }
    return preview


SOURCE_CHOICES = 200  # the newest conversations a new note may cite
FIRST_WORDS = 48


def source_choices(session: PersonSession) -> list[tuple[ConversationId, str]]:
    """The conversations a person's own note may cite (theirs, not incognito: W7), newest
    first, each named as a person knows it: "date · people · first words"."""
    store = session.store
    with store.read() as conn:
        infos = [i for i in conversation_log.for_person(conn, session.person) if not i.incognito]
        choices = []
        for info in reversed(infos[-SOURCE_CHOICES:]):
            first = next(
                (
                    e.seq
                    for e in conversation_log.entries(conn, info.id)
                    if e.kind is EntryKind.USER
                ),
                None,
            )
            texts = (
                conversation_log.entry_texts(store, conn, info.id, [first])
                if first is not None
                else {}
            )
            words = " ".join((texts.get(first or 0) or "").split())
            if len(words) > FIRST_WORDS:
                words = words[: FIRST_WORDS - 1].rstrip() + "…"
            people = ", ".join(info.participants)
            label = f"{info.created_at:%d %b %Y} · {people} · {words or '(no words)'}"
            choices.append((info.id, label))
    return choices
