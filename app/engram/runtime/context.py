"""Turn assembly and recall for a real turn: read scoped notes, then call the pure engine.

The turn's attribution (person, conversation) comes from the host; the audience comes from
who can read that conversation (S3). Both faces (agent tools, inspector preview, CLI) call
these same functions, so a preview is exactly what a turn would get.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engram.engine.assembly import (
    MAX_DIGEST_LINES,
    MAX_NOTES,
    AssembledBlock,
    TextNote,
    assemble,
    without_memory,
)
from engram.engine.merge import expired
from engram.engine.ranking import rank
from engram.engine.recall import MAX_LIMIT, RecallResult, clamp_limit, recall
from engram.model.clock import from_micros, to_micros
from engram.model.conversation import ConversationInfo
from engram.model.errors import CorruptStore, NotAllowed
from engram.model.event_bodies import BlockSeen, DroppedItem, ItemUsed, PlacedNote
from engram.model.events import Cause, NewEvent
from engram.model.events import EventType as E
from engram.model.ids import ConversationId, NoteId, PersonId, TurnId
from engram.model.notes import Note
from engram.model.scope import Audience, Kind
from engram.runtime.conversations import audience_of, require_conversation
from engram.runtime.usage_writer import UsageNotKept, UsageRecorder, WriteNow
from engram.store import journal, projection_notes, projection_state, store_time
from engram.store.errors import DatabaseError as SQLAlchemyError
from engram.store.store import Store

log = logging.getLogger(__name__)

# What a block can use: the profile (preferences and style) has first claim on the budget,
# so enough of it to fill any block; of the other notes at most 12 are placed (A5), so a
# few more than that cover texts that turn out unreadable. Reading no more keeps a turn's
# cost the same for 1,000 notes or 100,000.
PROFILE_CANDIDATES = 128
NOTE_CANDIDATES = MAX_NOTES + 8
PROFILE_KINDS = frozenset({Kind.PREFERENCE, Kind.STYLE})
OTHER_KINDS = frozenset(Kind) - PROFILE_KINDS


@dataclass(frozen=True, slots=True)
class Attribution:
    """Who a turn is about and where it happens, as the host (never the model) says."""

    person: PersonId
    conversation: ConversationId
    turn: TurnId | None = None


@dataclass(frozen=True, slots=True)
class ScopedRead:
    """Notes an audience may receive, ranked, with their text; or a failed read."""

    audience: Audience
    notes: list[TextNote]
    digest: list[str]
    readable: bool
    digest_seqs: tuple[int, ...] = ()  # the journal events holding `digest`, line for line


def _bound(store: Store, attribution: Attribution) -> ConversationInfo:
    info = require_conversation(store, attribution.conversation)
    if attribution.person not in info.participants:
        raise NotAllowed(
            f"{attribution.person} is not a participant of conversation {info.id}; memory "
            "is read only for the people in the conversation."
        )
    return info


def read_scoped(
    store: Store,
    person: PersonId,
    audience: Audience,
    limits: Sequence[tuple[frozenset[Kind] | None, int]] = ((None, MAX_LIMIT),),
    known: Mapping[int, str] | None = None,
) -> ScopedRead:
    """The prompt-facing read: scope filter first (S1, S2), then ranking, then text.

    `limits` says how many of the best-ranked notes to read of which kinds (None: any).
    The scope filter is the audience's own (issue 18 item 12): nothing here can widen it.
    `known`: texts already opened from this same journal, by journal position (a text
    never changes where it is kept; runtime.search_pool), which are not opened again.
    """
    audience.require_subject(person)
    try:
        with store.read() as conn:
            found: dict[str, Note] = {}
            for kinds, limit in limits:
                for note in projection_notes.eligible_ranked(conn, audience, limit, kinds):
                    found[note.id] = note
            now = journal_now(store, conn, person)
            notes = rank(note for note in found.values() if not expired(note, now))
            lines = projection_state.eligible_digest(conn, audience, MAX_DIGEST_LINES)
            seqs = [n.text_seq for n in notes] + [d.seq for d in lines]
            held = known or {}
            texts: dict[int, str | None] = {s: held[s] for s in seqs if s in held}
            texts |= journal.texts(store, conn, person, [s for s in seqs if s not in texts])
    except (CorruptStore, SQLAlchemyError) as error:
        # A9 / R2: the turn goes on; a failed read is reported as such, never as empty.
        log.warning("notes for %s unreadable: %s", person, error)
        return ScopedRead(audience, [], [], readable=False)
    ranked = [TextNote(n, t) for n in notes if (t := texts.get(n.text_seq)) is not None]
    readable_lines = [(d.seq, t) for d in lines if (t := texts.get(d.seq)) is not None]
    return ScopedRead(
        audience,
        ranked,
        [t for _, t in readable_lines],
        readable=True,
        digest_seqs=tuple(seq for seq, _ in readable_lines),
    )


def journal_now(store: Store, conn: Any, person: PersonId) -> datetime:
    """Now on the person's journal's own timeline (store_time: the time maintain decides
    expiry by), so a read and the maintenance pass agree on what is over (M3)."""
    return from_micros(store_time.journal_stamp(conn, person, to_micros(store.now())).at)


def read_eligible(
    store: Store, person: PersonId, audience: Audience, ids: Sequence[NoteId]
) -> list[TextNote]:
    """The prompt-facing read of named notes: those of `ids` that are active and that
    `audience` may receive (S1, S2), with their text, in the order given; any other id
    (closed, private to this audience, unknown, another person's: C1) is left out."""
    audience.require_subject(person)
    with store.read() as conn:
        now = journal_now(store, conn, person)
        notes = [
            note
            for note_id in ids
            if (note := projection_notes.eligible_note(conn, audience, note_id))
            and not expired(note, now)
        ]
        texts = journal.texts(store, conn, person, [n.text_seq for n in notes])
    return [TextNote(n, t) for n in notes if (t := texts.get(n.text_seq)) is not None]


def kinds_present(store: Store, person: PersonId, audience: Audience) -> frozenset[Kind]:
    """The kinds of which `audience` may receive at least one active note (S1, S2)."""
    audience.require_subject(person)
    with store.read() as conn:
        return frozenset(
            kind
            for kind in Kind
            if projection_notes.eligible_ranked(conn, audience, 1, frozenset({kind}))
        )


def audience_for_turn(store: Store, attribution: Attribution) -> Audience:
    """Who can read the turn's conversation, relative to its person (S3)."""
    return audience_of(_bound(store, attribution), attribution.person)


def _block_and_digest(
    store: Store, person: PersonId, audience: Audience
) -> tuple[AssembledBlock, tuple[int, ...]]:
    """The block for this audience, and the journal events holding the digest lines it was
    given (so the ledger can name the lines placed). A9: whatever goes wrong while reading
    or assembling, the turn goes on: the error is logged and the block comes without
    memory."""
    limits = ((PROFILE_KINDS, PROFILE_CANDIDATES), (OTHER_KINDS, NOTE_CANDIDATES))
    try:
        read = read_scoped(store, person, audience, limits)
        block = assemble(read.notes, read.digest, read.audience, notes_readable=read.readable)
        return block, read.digest_seqs
    except Exception:  # a bug here must not take the turn down (A9)
        log.exception("turn assembly failed for %s; the turn goes on without memory", person)
        return without_memory(audience), ()


def preview_block(store: Store, person: PersonId, audience: Audience) -> AssembledBlock:
    """The block a turn would get for this audience (the inspector's audience simulator)."""
    return _block_and_digest(store, person, audience)[0]


def preview_recall(
    store: Store,
    person: PersonId,
    audience: Audience,
    limit: int | None = None,
    writer: str | None = None,
) -> RecallResult:
    """What memory_recall would return for this audience; `writer` is the tool the agent
    writes notes with, if it has one (R2). A failed read, whatever the cause, is reported
    as such and never takes the turn down."""
    count = clamp_limit(limit)
    try:
        read = read_scoped(store, person, audience, ((None, count),))
        return recall(
            read.notes,
            read.digest,
            read.audience,
            readable=read.readable,
            limit=count,
            writer=writer,
        )
    except Exception:  # a bug here must not take the turn down (R2, A9)
        log.exception("recall failed for %s; answering that notes are unreadable", person)
        return recall((), (), audience, readable=False)


def record_use(
    store: Store,
    person: PersonId,
    notes: Sequence[str],
    via: str,
    cause: Cause | None,
    *,
    block: BlockSeen | None = None,
    usage: UsageRecorder | None = None,
) -> None:
    """The usage audit: these notes went into a turn or a tool's answer, in this order.

    With `block` (block_record's), the whole block a turn got is recorded, even when no
    note went into it. `usage` takes the record (a server's background writer); without
    it the record is written before this returns. Raises UsageNotKept when it cannot be
    kept, so the caller hands out no unaudited note (A9)."""
    if not notes and block is None:
        return
    body = ItemUsed(tuple(NoteId(n) for n in notes), via, block)
    event = NewEvent(E.ITEM_USED, "runtime", body, cause)
    if not (usage or WriteNow(store)).record(person, event):
        raise UsageNotKept(f"the usage of {person}'s notes cannot be recorded now")


def block_record(
    block: AssembledBlock, audience: Audience, digest_seqs: Sequence[int]
) -> BlockSeen:
    """The usage ledger's record of the block one turn got (in an `item_used` body, clear).

    `notes` (placed, in block order) is what the fold counts as usage; the rest lets the
    inspector rebuild exactly what the turn saw: each placed note's rank and section, what
    was dropped and why, the digest lines placed (by the events holding them), the audience
    and the budget. Ids, numbers and fixed reasons only: no text, so nothing here outlives
    an erased conversation (C4).
    """
    dropped = tuple(
        DroppedItem(d.what, d.reason, d.note, digest_seqs[d.line] if d.line is not None else None)
        for d in block.dropped
    )
    return BlockSeen(
        placed=tuple(PlacedNote(p.note, p.rank, p.section) for p in block.placed),
        dropped=dropped,
        digest=tuple(digest_seqs[i] for i in block.digest_placed),
        audience=audience.kind,
        budget=block.budget,
        used=block.used,
        readable=block.notes_readable,
    )


def _cause(attribution: Attribution) -> Cause:
    return Cause(attribution.conversation, attribution.turn)


def assemble_turn(
    store: Store,
    attribution: Attribution,
    *,
    record_usage: bool = False,
    usage: UsageRecorder | None = None,
) -> AssembledBlock:
    """The system block for a turn (A1-A9). A real turn records it in the usage ledger, even
    when nothing was placed (what it got is then the notice or nothing); a preview does not.

    Notes whose use cannot be recorded are not handed out: the block goes without them."""
    audience = audience_for_turn(store, attribution)
    block, digest_seqs = _block_and_digest(store, attribution.person, audience)
    if record_usage:
        record = block_record(block, audience, digest_seqs)
        placed = [p.note for p in block.placed]
        try:
            record_use(
                store,
                attribution.person,
                placed,
                "assembly",
                _cause(attribution),
                block=record,
                usage=usage,
            )
        except Exception:  # the turn goes on (A9), but no unaudited note goes into it
            log.exception("usage of %s's notes not recorded; block without memory", attribution)
            return without_memory(audience)
    return block


def recall_turn(
    store: Store,
    attribution: Attribution,
    *,
    limit: int | None = None,
    record_usage: bool = False,
    writer: str | None = None,
    usage: UsageRecorder | None = None,
) -> RecallResult:
    """memory_recall for a turn (R1, R2); `writer` as in preview_recall, `usage` as in
    record_use."""
    audience = audience_for_turn(store, attribution)
    result = preview_recall(store, attribution.person, audience, limit, writer)
    if record_usage:
        used = [t.note.id for t in result.notes]
        try:
            record_use(store, attribution.person, used, "recall", _cause(attribution), usage=usage)
        except Exception:  # as in assemble_turn: nothing unaudited is handed out
            log.exception("usage of %s's notes not recorded; recalling nothing", attribution)
            return recall((), (), audience, readable=False)
    return result
