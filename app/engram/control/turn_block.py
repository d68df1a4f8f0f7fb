"""What did the agent see? The block one turn got, rebuilt from the usage ledger.

A real turn's assembly records one `item_used` event (runtime.context.block_record) caused
by the turn it was assembled for: the user turn the assistant then answers. So for an
assistant turn, the block it got is the newest one recorded for the turns it answers (those
since the previous assistant turn) or for itself. Tool answers (memory_recall, search)
recorded for those turns are shown beside it. Everything comes from the journal: placed
notes with their rank, what was dropped and why, the audience and the budget; the texts
are read now, and the block is rebuilt with the same engine and checked against the
recorded length, so what is shown is exactly what the turn got, or says why it cannot be.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.engine.assembly import TextNote, assemble
from engram.model.conversation import EntryKind
from engram.model.errors import NotFound
from engram.model.event_bodies import ItemUsed, body_as
from engram.model.events import Event, EventType
from engram.model.ids import ConversationId, NoteId, PersonId, TurnId
from engram.model.scope import AudienceKind
from engram.runtime.conversations import require_conversation
from engram.store import conversation_log, journal

AUDIENCE_SENTENCES = {
    AudienceKind.SUBJECT_ALONE: "Only {person} could read this conversation, so private notes "
    "could be used.",
    AudienceKind.SHARED: "Others could read this conversation ({readers}), so private notes "
    "were withheld and only portable ones could be used.",
    AudienceKind.UNKNOWN: "Nobody could prove who reads this conversation, so private notes "
    "were withheld and only portable ones could be used.",
}


@dataclass(frozen=True, slots=True)
class SeenNote:
    """A note as a turn got it: its rank and section then, its text and status now."""

    note: NoteId
    rank: int
    section: str
    text: str | None
    status: str | None  # None: the note is gone (erased)


@dataclass(frozen=True, slots=True)
class SeenDrop:
    """Something assembly left out, and why."""

    what: str
    reason: str
    note: NoteId | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """Notes a memory tool returned during the turn, in the order it returned them."""

    via: str
    at: datetime
    event: int
    notes: tuple[SeenNote, ...]


@dataclass
class SeenBlock:
    """The system block one turn got."""

    event: int
    at: datetime
    for_turn: TurnId | None
    audience: AudienceKind | None  # None: recorded before the ledger kept the audience
    budget: int | None
    used: int | None
    readable: bool
    placed: list[SeenNote]
    dropped: list[SeenDrop] = field(default_factory=list)
    digest: list[str | None] = field(default_factory=list)
    complete: bool = True  # the ledger holds the whole block, not only the notes placed
    text: str | None = None  # the block rebuilt exactly, or None (see `why_no_text`)
    why_no_text: str = ""


@dataclass
class TurnSight:
    """Everything memory gave one turn: the assembled block and any tool answers."""

    person: PersonId
    conversation: ConversationId
    turn: TurnId
    readers: tuple[PersonId, ...]
    block: SeenBlock | None
    tools: list[ToolAnswer]

    @property
    def audience_sentence(self) -> str:
        """Who could read the turn, and what that allowed (S2, S3)."""
        if self.block is None or self.block.audience is None:
            return "The audience of this turn was not recorded."
        others = ", ".join(p for p in self.readers if p != self.person) or "others"
        return AUDIENCE_SENTENCES[self.block.audience].format(person=self.person, readers=others)


def answered_turns(entries: Sequence[Any], turn: TurnId) -> list[TurnId]:
    """The turns whose recorded memory a turn got: for an assistant turn, itself and the
    turns since the previous assistant turn; for any other turn, itself."""
    turns = [e for e in entries if e.kind in (EntryKind.USER, EntryKind.ASSISTANT)]
    index = next((i for i, e in enumerate(turns) if e.ref == turn), None)
    if index is None:
        raise NotFound(f"There is no turn {turn!r} in this conversation.")
    if turns[index].kind is not EntryKind.ASSISTANT:
        return [turn]
    found = [turn]
    for entry in reversed(turns[:index]):
        if entry.kind is EntryKind.ASSISTANT:
            break
        found.append(TurnId(str(entry.ref)))
    return found


def turn_sight(session: PersonSession, conversation: ConversationId, turn: TurnId) -> TurnSight:
    """What memory gave a turn of one of this person's conversations (C1), from the ledger."""
    store, person = session.store, session.person
    info = require_conversation(store, conversation)
    if person not in info.participants:
        raise NotFound(f"{person} has no conversation {conversation}.")
    with store.read() as conn:
        turns = answered_turns(conversation_log.entries(conn, conversation), turn)
        events = journal.events_caused_by(conn, person, conversation, turns, [EventType.ITEM_USED])
        used = [(e, body_as(e.body, ItemUsed)) for e in events]
        assemblies = [(e, b) for e, b in used if b.via_name == "assembly"]
        last = assemblies[-1][1].block if assemblies else None
        digest_seqs = list(last.digest) if last else []
        digest_texts = journal.texts(store, conn, person, digest_seqs)
    named = {n for _, b in used for n in (*b.notes, *b.dropped_notes())}
    notes = memory_control.notes_by_ids(session, sorted(named))
    texts = memory_control.texts_of(session, notes)
    held = {n.id: n for n in notes}

    def seen(note: NoteId, rank: int, section: str) -> SeenNote:
        found = held.get(note)
        return SeenNote(note, rank, section, texts.get(note), found.status if found else None)

    block = None
    if assemblies:
        block = _block(*assemblies[-1], seen, [digest_texts.get(s) for s in digest_seqs])
        block = _rebuilt(block, held, session)
    tools = [
        ToolAnswer(b.via_name, e.at, e.seq, tuple(seen(n, i, "") for i, n in enumerate(b.notes, 1)))
        for e, b in used
        if b.via_name != "assembly"
    ]
    return TurnSight(person, conversation, turn, info.participants, block, tools)


def _block(event: Event, body: ItemUsed, seen: Any, digest: list[str | None]) -> SeenBlock:
    block = body.block
    if block is not None:
        placed = [seen(p.note, p.rank, p.section) for p in block.placed]
    else:  # an older record: the notes placed, in block order, and nothing more
        placed = [seen(n, i, "") for i, n in enumerate(body.notes, 1)]
    dropped = []
    for d in block.dropped if block else ():
        text = seen(d.note, 0, "").text if d.note else None
        dropped.append(SeenDrop(d.what, d.reason, d.note, text))
    return SeenBlock(
        event=event.seq,
        at=event.at,
        for_turn=event.cause.turn if event.cause else None,
        audience=block.audience if block else None,
        budget=block.budget if block else None,
        used=block.used if block else None,
        readable=block.readable if block else True,
        placed=placed,
        dropped=dropped,
        digest=digest,
        complete=block is not None,
    )


def _rebuilt(block: SeenBlock, held: Mapping[NoteId, Any], session: PersonSession) -> SeenBlock:
    """Rebuild the block's text with the engine from what was recorded; keep it only if it
    has exactly the recorded length (same notes, same texts, same rules)."""
    if not block.complete or block.audience is None or block.budget is None:
        block.why_no_text = "This turn was recorded before the ledger kept whole blocks."
        return block
    gone = [p for p in block.placed if p.text is None or p.note not in held]
    if gone or any(line is None for line in block.digest):
        block.why_no_text = (
            "Part of this block's text is gone (erased with its conversation), so the block "
            "cannot be shown; what went in is listed below."
        )
        return block
    items = [TextNote(held[p.note], str(p.text)) for p in block.placed]
    rebuilt = assemble(
        items,
        [str(line) for line in block.digest],
        memory_control.audience_as(session, block.audience),
        notes_readable=block.readable,
        budget=block.budget,
    )
    same = [p.note for p in rebuilt.placed] == [p.note for p in block.placed]
    if rebuilt.used != block.used or not same:
        block.why_no_text = (
            "The block cannot be rebuilt exactly (assembly has changed since), so only what "
            "went in is listed below."
        )
        return block
    block.text = rebuilt.block
    return block
