"""The runtime's note writes (extraction, approved tool calls): the one write path.

Every function appends journal events through store.journal.append, which folds them into
the projection with the engine's fold in the same transaction.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from engram.engine.fold import reopenings
from engram.model.errors import InvalidInput, NotAllowed
from engram.model.event_bodies import (
    CandidateSuggested,
    Contradicted,
    DigestLineAdded,
    NoteAdded,
    Restated,
    Retired,
    body_as,
)
from engram.model.events import Cause, NewEvent
from engram.model.events import EventType as E
from engram.model.ids import (
    CandidateId,
    ConversationId,
    NoteId,
    PersonId,
    TurnId,
    new_candidate_id,
    new_note_id,
)
from engram.model.notes import CONFIDENCE_CAP_BP
from engram.model.scope import Durability, Kind, Scope
from engram.store import conversation_log, journal, projection_memory, projection_state
from engram.store.store import Store, WriteTxn

MAX_NOTE_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class NoteDraft:
    """What a writer knows about a new note."""

    text: str
    kind: Kind
    scope: Scope
    durability: Durability = Durability.LASTING
    confidence_bp: int = 6_000
    topic: str | None = None


def check_text(text: str) -> str:
    """Refuse empty or oversized note text, or text holding a NUL, with one sentence.

    A NUL cannot reach a note through the command line (an argument cannot hold one) and
    marks a binary file in a legacy import; HTTP, MCP and a library host are refused here
    alike, so no face keeps what another could not (issue 15, item 11)."""
    if "\x00" in text:
        raise InvalidInput("The text holds a NUL character; nothing was written.")
    cleaned = text.strip()
    if not cleaned:
        raise InvalidInput("A note needs some text.")
    if len(cleaned) > MAX_NOTE_CHARS:
        raise InvalidInput(
            f"The note is {len(cleaned):,} characters; a note may hold at most {MAX_NOTE_CHARS:,}."
        )
    return cleaned


def check_confidence(confidence_bp: int) -> int:
    """Confidence is in basis points, 0 to 10,000."""
    if not 0 <= confidence_bp <= CONFIDENCE_CAP_BP:
        raise InvalidInput("Confidence is in basis points, from 0 to 10000.")
    return confidence_bp


def note_added(
    draft: NoteDraft,
    actor: str,
    source: Cause | None,
    origin: ConversationId | None,
    note_id: NoteId | None = None,
) -> NewEvent:
    """The event that adds a note (its text sealed under the origin's key too, C4)."""
    body = NoteAdded(
        note=note_id or new_note_id(),
        kind=draft.kind,
        scope=draft.scope,
        durability=draft.durability,
        confidence_bp=check_confidence(draft.confidence_bp),
        topic=draft.topic or None,
        origin=origin or None,
        source=source,
    )
    return NewEvent(E.NOTE_ADDED, actor, body, source, check_text(draft.text), origin)


def suggestion(
    draft: NoteDraft,
    actor: str,
    extractor: str,
    cause: Cause | None,
    *,
    sensitive: bool,
    ambiguous: bool,
    category: str | None = None,
    reason: str | None = None,
    restates: NoteId | None = None,
    contradicts: NoteId | None = None,
    as_note: NoteId | None = None,
    imported: Mapping[str, Any] | None = None,
) -> tuple[CandidateId, NewEvent]:
    """A pending candidate (P5): the note it would become, for a person to decide on;
    `as_note`, the id that note takes when applied (if still free then); `imported`, where
    a memory brought in from elsewhere came from (issue 21 item 10), sealed with its text.

    Its text and its review flags (sensitive, hedged) are sealed together like a note's
    text, under its conversation's key too (C4): the clear journal says only that a
    candidate of some kind exists, not what it is about.
    """
    candidate = new_candidate_id()
    body = CandidateSuggested(
        candidate=candidate,
        kind=draft.kind,
        scope=draft.scope,
        durability=draft.durability,
        confidence_bp=check_confidence(draft.confidence_bp),
        extractor=extractor,
        topic=draft.topic or None,
        origin=cause.conversation if cause else None,
        source=cause,
        restates=restates or None,
        contradicts=contradicts or None,
        as_note=as_note or None,
    )
    origin = cause.conversation if cause else None
    # ensure_ascii=False: the store's seam must see the text itself, not \u escapes that
    # would smuggle a lone surrogate past its Unicode check (issue 9, item 10)
    flags: dict[str, Any] = {
        "text": check_text(draft.text),
        "sensitive": sensitive or category is not None,
        "ambiguous": ambiguous,
    }
    if category is not None:  # sealed too: the category itself says what it is about
        flags["category"] = category
    if reason:
        flags["reason"] = reason[:300]
    if imported:  # a file's name or a heading says what the memory is about: sealed too
        flags["imported"] = dict(imported)
    sealed = json.dumps(flags, ensure_ascii=False)
    return candidate, NewEvent(E.CANDIDATE_SUGGESTED, actor, body, cause, sealed, origin)


@dataclass(frozen=True, slots=True)
class Suggested:
    """A candidate's sealed part, opened."""

    text: str | None
    sensitive: bool = False
    ambiguous: bool = False
    category: str | None = None  # the sensitive category (P5), when one was named
    reason: str | None = None
    imported: dict[str, Any] | None = None  # where an imported memory came from


def read_suggestion(payload: str | None) -> Suggested:
    """Open what `suggestion` sealed (None when its text is gone: C4, C3)."""
    if payload is None:
        return Suggested(None)
    data = json.loads(payload)
    return Suggested(
        str(data["text"]),
        bool(data["sensitive"]),
        bool(data["ambiguous"]),
        data.get("category"),
        data.get("reason"),
        data.get("imported"),
    )


def draft_of_suggestion(body: CandidateSuggested, text: str) -> NoteDraft:
    """The note a suggested candidate becomes when applied (an older suggestion without a
    durability or a confidence: lasting, 6,000)."""
    return NoteDraft(
        text=text,
        kind=body.kind,
        scope=body.scope,
        durability=body.durability or Durability.LASTING,
        confidence_bp=6_000 if body.confidence_bp is None else body.confidence_bp,
        topic=body.topic,
    )


def writable_conversation(txn: WriteTxn, person: PersonId, conversation: ConversationId) -> None:
    """W4/W7: refuse to learn from a conversation that is gone, incognito, or not theirs."""
    journal.require_person(txn.conn, person)
    info = conversation_log.get(txn.conn, conversation)
    if info is None:
        raise NotAllowed(f"Conversation {conversation} no longer exists; nothing was written.")
    if info.incognito:
        raise NotAllowed(f"Conversation {conversation} is incognito; it produces no notes.")
    if person not in info.participants:
        raise NotAllowed(f"{person} is not a participant of conversation {conversation}.")


def learn_note(
    store: Store,
    person: PersonId,
    draft: NoteDraft,
    conversation: ConversationId,
    turn: TurnId | None,
    actor: str = "extractor",
) -> NoteId:
    """A note learned in a conversation turn."""
    with store.write() as txn:
        writable_conversation(txn, person, conversation)
        event = note_added(draft, actor, Cause(conversation, turn), conversation)
        journal.append(store, txn, person, [event])
    return body_as(event.body, NoteAdded).note


def restate(
    store: Store,
    person: PersonId,
    note: NoteId,
    conversation: ConversationId,
    turn: TurnId | None,
    actor: str = "extractor",
) -> None:
    """F2: a new source for an existing note."""
    cause = Cause(conversation, turn)
    with store.write() as txn:
        writable_conversation(txn, person, conversation)
        body = Restated(note, cause)
        journal.append(store, txn, person, [NewEvent(E.RESTATED, actor, body, cause)])


def contradict(
    store: Store,
    person: PersonId,
    old: NoteId,
    draft: NoteDraft,
    conversation: ConversationId,
    turn: TurnId | None,
    actor: str = "extractor",
) -> NoteId:
    """F1: a new note that closes an old one's interval; both are kept."""
    cause = Cause(conversation, turn)
    with store.write() as txn:
        writable_conversation(txn, person, conversation)
        added = note_added(draft, actor, cause, conversation)
        new_id = body_as(added.body, NoteAdded).note
        closing = NewEvent(E.CONTRADICTED, actor, Contradicted(old, new_id), cause)
        journal.append(store, txn, person, [added, closing])
    return new_id


def add_digest_line(
    store: Store,
    person: PersonId,
    conversation: ConversationId,
    text: str,
    actor: str = "runtime",
    scope: Scope = Scope.UNSPECIFIED,
) -> None:
    """A recent-conversation digest line; private unless said otherwise, like any note (S2)."""
    with store.write() as txn:
        writable_conversation(txn, person, conversation)
        journal.append(store, txn, person, [digest_event(conversation, text, actor, scope)])


def digest_event(
    conversation: ConversationId, text: str, actor: str, scope: Scope = Scope.UNSPECIFIED
) -> NewEvent:
    """The journal event holding one conversation's digest line (M4), sealed under the
    conversation's key too, so deleting the conversation takes the line with it (C4)."""
    return NewEvent(
        E.DIGEST_LINE_ADDED,
        actor,
        DigestLineAdded(conversation, scope),
        Cause(conversation),
        check_text(text),
        conversation,
    )


def retire(store: Store, person: PersonId, note: NoteId, actor: str = "maintenance") -> None:
    """M3: a transient note's interval ends."""
    with store.write() as txn:
        journal.append(store, txn, person, [NewEvent(E.RETIRED, actor, Retired(note))])


def reopened_after(
    conn: Any,
    person: PersonId,
    deleted: Collection[NoteId],
    actor: str,
    cause: Cause | None = None,
    gone_now: Collection[ConversationId] = (),
) -> list[NewEvent]:
    """The events that reopen what the `deleted` notes contradicted (engine.fold.reopenings,
    which reads the notes: this module reads none), for the deleting write to append after
    its own events. `gone_now`: a conversation the same write deletes."""
    gone = projection_state.deleted_conversations(conn, person) | set(gone_now)
    return reopenings(projection_memory.StoredNotes(conn, person), deleted, gone, actor, cause)
