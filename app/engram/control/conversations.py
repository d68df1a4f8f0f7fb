"""Deleting a conversation, with a preview of which notes close and which survive (C4)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from engram.control import notes as memory_control
from engram.control.cascade_preview import (
    REJECTED_BECAUSE,
    Cascade,
    CascadeCandidate,
    CascadeNote,
    CascadePreview,
    cascade_preview,
)
from engram.control.session import PersonSession
from engram.control.wording import actor_named, conversation_named, listed, quoted
from engram.model.conversation import EntryKind
from engram.model.errors import NotAllowed
from engram.model.event_bodies import (
    CandidateReviewed,
    CandidateSuggested,
    ConversationDeleted,
    body_as,
)
from engram.model.events import EventType as E
from engram.model.events import NewEvent
from engram.model.ids import ConversationId, PersonId
from engram.model.notes import Note
from engram.runtime.conversations import require_conversation
from engram.runtime.note_writes import read_suggestion, reopened_after
from engram.store import conversation_log, erasure, journal, pending_erasure, projection_state
from engram.store.erasure import Shredded
from engram.store.store import Store, WriteTxn


@dataclass(frozen=True, slots=True)
class ConversationDeletion:
    """The preview, or the result, of deleting a conversation: for the asking person only
    (`for_everyone` False on a shared conversation), or for every participant. Frozen:
    the deletion hands back a new value, done, with its report (issue 18 item 9)."""

    conversation: ConversationId
    cascade: Cascade
    others_closing: int = 0
    done: bool = False
    report: Mapping[str, Any] = field(default_factory=dict)
    # The conversation in words ("the conversation of 3 Nov with maya and sam").
    named: str = ""
    for_everyone: bool = True
    # The other participants whose part is deleted too (for everyone), each with theirs.
    others: tuple[Cascade, ...] = ()
    # Who keeps the conversation (a delete for one person of a shared one).
    keeping: tuple[PersonId, ...] = ()

    @property
    def people(self) -> list[Cascade]:
        """Every person whose part is deleted, the asker first."""
        return [self.cascade, *self.others]

    @property
    def preview(self) -> CascadePreview:
        """The preview in words, with its verdict: what every face prints (C4)."""
        return cascade_preview(
            self.conversation,
            self.named,
            self.people,
            self.keeping,
            self.others_closing,
            done=self.done,
        )

    def to_json(self) -> dict[str, Any]:
        """As printed by `engram conversation delete --json`."""
        return {
            "conversation": self.conversation,
            "person": self.cascade.person,
            "deleted": self.done,
            "for_everyone": self.for_everyone,
            "closes": [v.to_json() for v in self.cascade.closes],
            "survives": [v.to_json() for v in self.cascade.survives],
            "reopens": [v.to_json() for v in self.cascade.reopens],
            "shreds": [v.to_json() for v in self.cascade.shreds],
            "candidates_rejected": [c.to_json() for c in self.cascade.rejects],
            "other_participants_notes_closing": self.others_closing,
            "people": [c.to_json() for c in self.people],
            "kept_by": list(self.keeping),
            **self.preview.to_json(),
            **({"report": dict(self.report)} if self.done else {}),
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


def pending_from(
    store: Store, conn: Any, person: PersonId, conversation: ConversationId
) -> list[CascadeCandidate]:
    """A person's pending suggestions learned in a conversation, with their words."""
    pending = []
    for state in projection_state.candidates(conn, person, "pending"):
        suggested = journal.event_at(conn, person, state.payload_seq)
        if (
            suggested is not None
            and body_as(suggested.body, CandidateSuggested).origin == conversation
        ):
            pending.append(state)
    sealed = journal.texts(store, conn, person, [s.payload_seq for s in pending])
    return [
        CascadeCandidate(s.id, s.revision, read_suggestion(sealed.get(s.payload_seq)).text)
        for s in pending
    ]


def _cascade(session: PersonSession, conversation: ConversationId) -> Cascade:
    closes: list[CascadeNote] = []
    survives: list[CascadeNote] = []
    reopens: list[CascadeNote] = []
    shreds: list[CascadeNote] = []
    for view in memory_control.notes_touching(session, conversation):
        if not view.note.is_active:
            # C4: a closed note still shows its words in its history; those learned here go.
            if view.note.origin == conversation and view.text is not None:
                reason = "it is already closed, but its words come from this conversation"
                shreds.append(CascadeNote(view, reason + " and are shredded with it"))
            continue
        if view.note.origin == conversation:
            reason = "its text comes from this conversation, so it goes with it"
            closes.append(CascadeNote(view, reason))
        else:
            reason = why_it_survives(session, view.note, conversation)
            survives.append(CascadeNote(view, reason))
    closing = {c.note.id: c.text for c in closes}
    for view, after in memory_control.reopening(session, list(closing), conversation):
        reason = (
            f"{quoted(closing.get(after))}, which contradicted it, goes with this "
            "conversation, so what was known before holds again"
        )
        reopens.append(CascadeNote(view, reason))
    with session.store.read() as conn:
        rejects = pending_from(session.store, conn, session.person, conversation)
    return Cascade(
        session.person,
        tuple(closes),
        tuple(survives),
        tuple(reopens),
        tuple(shreds),
        tuple(rejects),
    )


def _sentence_start(words: str) -> str:
    return words[:1].upper() + words[1:]


def is_staff(actor: str) -> bool:
    """Support staff act under `staff:ID` (DESIGN: the inspector's operations)."""
    return actor.startswith("staff:")


def preview_delete(
    session: PersonSession, conversation: ConversationId, *, for_everyone: bool = False
) -> ConversationDeletion:
    """What deleting the conversation would do: for this person alone when others share it
    (their turns excised, their notes from it closed), or — a staff action — for everyone
    in it, naming each person and what closes for them (C4). Changes nothing."""
    info = require_conversation(session.store, conversation)
    if session.person not in info.participants:
        raise NotAllowed(f"{session.person} is not a participant of conversation {conversation}.")
    named = conversation_named(info.created_at, info.participants)
    others = tuple(p for p in info.participants if p != session.person)
    if others and for_everyone and not is_staff(session.actor):
        raise NotAllowed(
            f"{_sentence_start(named)} is shared with {listed(others)}, so only support staff "
            "may delete it for everyone; delete it for yourself, or ask support to."
        )
    mine = _cascade(session, conversation)
    if others and not for_everyone:
        return ConversationDeletion(
            conversation, mine, 0, named=named, for_everyone=False, keeping=others
        )
    # Staff act on each participant under their own id (never the asker's name).
    theirs = tuple(
        _cascade(PersonSession(session.store, p, session.actor), conversation) for p in others
    )
    closing = sum(len(c.closes) for c in theirs)
    return ConversationDeletion(conversation, mine, closing, named=named, others=theirs)


def _deletion_events(
    txn: WriteTxn,
    session: PersonSession,
    person: PersonId,
    cascade: Cascade,
    conversation: ConversationId,
    kept_by_others: bool,
) -> tuple[list[NewEvent], Shredded]:
    """One person's part of a deletion: the C4 cascade, what reopens (F1), and their pending
    suggestions from it rejected with the reason, in the caller's transaction."""
    shredded, removed = erasure.shred_note_payloads(session.store, txn, person, conversation)
    closed = [v.note.id for v in cascade.closes]
    body = ConversationDeleted(
        conversation,
        closed=tuple(closed),
        trimmed=tuple(v.note.id for v in cascade.survives),
        shredded=tuple(shredded),
        # Only this person's part went: the audit must not say the transcript and key did.
        kept_by_others=kept_by_others,
    )
    actor = session.actor
    reopen = reopened_after(txn.conn, person, closed, actor, None, [conversation])
    # Read again under the journal's lock: a suggestion made since the preview is rejected too.
    rejects = [
        NewEvent(
            E.CANDIDATE_REVIEWED,
            actor,
            CandidateReviewed(c.id, c.revision, "rejected"),
            None,
            REJECTED_BECAUSE,
        )
        for c in pending_from(session.store, txn.conn, person, conversation)
    ]
    return [NewEvent(E.CONVERSATION_DELETED, actor, body), *reopen, *rejects], removed


def delete_conversation(
    session: PersonSession, conversation: ConversationId, *, for_everyone: bool = False
) -> ConversationDeletion:
    """Delete the conversation (C4). Shared with others, it is deleted for this person
    alone unless `for_everyone` (staff only): their turns are excised, their notes whose
    text came from it close (text shredded), their pending suggestions from it are
    rejected; the others keep it, their notes and turns untouched. Otherwise its log and
    key go, and every participant's part goes with them."""
    preview = preview_delete(session, conversation, for_everyone=for_everyone)
    store = session.store
    tally = Shredded()
    excised = 0
    with store.write() as txn:
        for cascade in preview.people:
            journal.lock(txn, cascade.person)
            events, removed = _deletion_events(
                txn, session, cascade.person, cascade, conversation, bool(preview.keeping)
            )
            tally.merge(removed)
            journal.append(store, txn, cascade.person, events)
        if preview.keeping:
            reason = "participant deleted the conversation for themself"
            excised, removed = erasure.excise_author(
                store, txn, conversation, session.person, session.actor, reason
            )
            tally.merge(removed)
            kind = "conversation_part"
        else:
            tally.merge(erasure.shred_conversation(store, txn, conversation))
            kind = "conversation"
        erasure.record_erasure(
            store,
            txn,
            session.actor,
            {"kind": kind, "subject": store.hidden_name(conversation), "rows": tally.rows_deleted},
        )
    named = _sentence_start(preview.named or "the conversation")
    done = (
        f"{named} was deleted for {session.person} (their turns excised, their notes from it "
        "shredded)"
        if preview.keeping
        else f"{named} was deleted (its key destroyed, its rows gone)"
    )
    finished = pending_erasure.finish_or_raise(store, done)
    report = {
        "keys_destroyed": tally.keys_destroyed,
        "rows_deleted": tally.rows_deleted,
        **({"turns_excised": excised} if preview.keeping else {}),
        **finished.to_json(),
    }
    return replace(preview, done=True, report=report)


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
