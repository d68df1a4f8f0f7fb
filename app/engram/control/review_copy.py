"""A review copy of one person (issue 21 items 2 and 3): a new store, sealed under a
passphrase the reviewer chooses, holding only that person's journal, their conversations
and their candidates, and saying where it came from.

The copy is built through the store's own write path, never by copying rows: the person's
journal is appended event by event, in order and at the times it has, so the copy's journal
positions are the live store's positions (the reviewer's decisions can be checked against
them when they come back, control/review_import.py) and its fold is the same fold. Each of
their conversations is started again with them as its only reader; a shared one's turns by
anyone else are logged without their text and marked excised, so the transcript keeps its
shape and no word or id of another person is in the file. A shared conversation's digest
line (it may sum up the others' words) comes without its text too.

Last, a `review_copy_made` event in the copy records the live store, the position it was
taken through and when, signed by the live store: the import recognises its own copy by
that signature and by the copy's signing key it names, and refuses any other. The live
store records the copy in the person's audit log (an `exported` event).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from engram.control.export_record import ensure_recordable, record_export
from engram.control.session import PersonSession
from engram.model.clock import ManualClock, iso
from engram.model.conversation import ConversationInfo, EntryKind, LogEntry
from engram.model.errors import InvalidInput, StoreExists
from engram.model.event_bodies import (
    CandidateSuggested,
    DigestLineAdded,
    NoteAdded,
    ReviewCopyMade,
    body_as,
)
from engram.model.events import Event, EventType, NewEvent
from engram.model.ids import ConversationId, PersonId
from engram.model.progress import Progress
from engram.store import conversation_log, crypto, journal, people
from engram.store.crypto import KdfParams
from engram.store.store import Store

PAGE = 500  # journal events read, decrypted and written at once
COPIER = "engram"  # who the copy's own entries (its marks of what was left out) are by
LEFT_OUT = "another participant's turn, left out of this review copy"
# What the source store signs a copy's record under (never the same bytes as anything else).
SIGNED_CONTEXT = b"engram review copy v1\x00"


@dataclass(frozen=True)
class ReviewCopyWritten:
    """What an export wrote."""

    path: Path
    person: PersonId
    source: str
    through: int
    taken_at: datetime
    conversations: int
    turns_left_out: int

    def to_json(self) -> dict[str, Any]:
        """The JSON shape the CLI prints."""
        return {
            "review_copy": str(self.path),
            "person": self.person,
            "source": self.source,
            "through": self.through,
            "taken_at": iso(self.taken_at),
            "conversations": self.conversations,
            "turns_left_out": self.turns_left_out,
        }


@dataclass(frozen=True)
class ReviewCopyInfo:
    """What a review copy says about itself (the banner, `engram review info`)."""

    person: PersonId
    source: str
    through: int
    taken_at: str
    made: ReviewCopyMade
    made_seq: int

    def sentence(self) -> str:
        """Plainly, whose copy this is, from where and when."""
        return (
            f"This is a review copy of {self.person}'s memory, taken from store {self.source} "
            f"on {self.taken_at[:16].replace('T', ' ')} UTC. Decisions made here stay here "
            "until the review is imported into that store."
        )

    def to_json(self) -> dict[str, Any]:
        """As printed with --json."""
        return {
            "review_copy": True,
            "person": self.person,
            "source": self.source,
            "through": self.through,
            "taken_at": self.taken_at,
        }


def signed_message(made: ReviewCopyMade) -> bytes:
    """The bytes the source store signs for a copy's record."""
    return SIGNED_CONTEXT + crypto.utf8(crypto.canonical_json(made.signed_part()))


def review_copy_info(store: Store) -> ReviewCopyInfo | None:
    """The review copy's own record, if this store is one (None for any other store)."""
    with store.read() as conn:
        persons = people.some_ids(conn, 2)  # a review copy holds one person
        if len(persons) != 1:
            return None
        person = persons[0]
        found = list(journal.events_of_types(conn, person, [EventType.REVIEW_COPY_MADE]))
    if not found:
        return None
    made = body_as(found[0].body, ReviewCopyMade)
    return ReviewCopyInfo(person, made.source, made.through, made.taken_at, made, found[0].seq)


def export_review_copy(
    session: PersonSession,
    destination: str | os.PathLike[str],
    passphrase: str,
    *,
    kdf: KdfParams | None = None,
    progress: Progress | None = None,
) -> ReviewCopyWritten:
    """Write a review copy of the session's person to `destination` (a new file), sealed
    under `passphrase`, and record it in the person's audit log. `progress` hears (entries
    and events copied, of how many)."""
    ensure_recordable(session)
    if not passphrase:
        raise InvalidInput(
            "The review copy's passphrase is empty; choose one with some characters."
        )
    target = Path(destination).expanduser()
    if target.exists() or target.is_symlink():
        raise StoreExists(
            f"There is already a file at {target}; it was left unchanged — choose another name."
        )
    if not target.parent.is_dir():
        raise InvalidInput(
            f"The folder {target.parent} does not exist; choose another place for the review "
            "copy. Nothing was written."
        )
    live, person = session.store, session.person
    clock = ManualClock(live.now())
    copy = Store.create(str(target), passphrase=passphrase, use_keyring=False, kdf=kdf, clock=clock)
    try:
        with live.read() as conn:
            conversations = conversation_log.for_person(conn, person)
            first = journal.event_at(conn, person, 1)
            head = journal.head(conn, person)
            assert first is not None and head is not None  # the session resolved the person
            clock.set(first.at)
            with copy.write() as txn:
                journal.ensure_person(copy, txn, person, actor=first.actor)
            entries = _entries_in_order(conn, conversations)
            steps = _Steps(len(entries) + head[0], progress)
            left_out = _copy_conversations(live, conn, copy, clock, person, entries, steps)
            shared = {c.id for c in conversations if set(c.participants) - {person}}
            held = {c.id for c in conversations}
            _copy_journal(live, conn, copy, clock, person, held, shared, head[0], steps)
        taken = live.now()
        clock.set(taken)
        made = ReviewCopyMade(
            source=live.info.id,
            source_key=live.info.verify_key.hex(),
            copy=copy.info.id,
            copy_key=copy.info.verify_key.hex(),
            through=head[0],
            head=head[1].hex(),
            taken_at=str(iso(taken)),
        )
        signature = live.signer.sign(signed_message(made))
        signed = ReviewCopyMade(**{**made.signed_part(), "signature": signature.hex()})
        with copy.write() as txn:
            journal.append(
                copy, txn, person, [NewEvent(EventType.REVIEW_COPY_MADE, session.actor, signed)]
            )
        copy.close()
        record_export(session, "review_copy", "file")
    except BaseException:
        copy.close()
        _remove(target)
        raise
    return ReviewCopyWritten(
        target, person, live.info.id, head[0], taken, len(conversations), left_out
    )


def _remove(target: Path) -> None:
    for end in ("", "-wal", "-shm", "-journal", ".checkpoint", ".checkpoint.lock"):
        with contextlib.suppress(OSError):
            target.with_name(target.name + end).unlink(missing_ok=True)


# ---- conversations ----------------------------------------------------------------------


@dataclass
class _Steps:
    """How far the copy got, for a progress callback."""

    total: int
    progress: Progress | None
    done: int = 0

    def advance(self, count: int) -> None:
        self.done = min(self.total, self.done + count)
        if self.progress is not None:
            self.progress(self.done, self.total)


def _entries_in_order(
    conn: Any, conversations: list[ConversationInfo]
) -> list[tuple[LogEntry, ConversationInfo]]:
    """Every entry of these conversations, in the order they were written across all of
    them (so each keeps its time in the copy)."""
    entries: list[tuple[LogEntry, ConversationInfo]] = []
    for info in conversations:
        entries += [(e, info) for e in conversation_log.entries(conn, info.id)]
    entries.sort(key=lambda pair: (pair[0].at, pair[0].conversation, pair[0].seq))
    return entries


def _copy_conversations(
    live: Store,
    conn: Any,
    copy: Store,
    clock: ManualClock,
    person: PersonId,
    entries: list[tuple[LogEntry, ConversationInfo]],
    steps: _Steps,
) -> int:
    """Every conversation of the person, entry by entry; returns how many turns by anyone
    else were left out."""
    others = set(people.all_ids(conn)) - {person}
    left_out: dict[ConversationId, list[int]] = {}
    left = 0
    for start in range(0, len(entries), PAGE):
        page = entries[start : start + PAGE]
        texts: dict[tuple[str, int], str | None] = {}
        by_conversation: dict[ConversationId, list[int]] = {}
        for entry, _ in page:
            if entry.has_payload:
                by_conversation.setdefault(entry.conversation, []).append(entry.seq)
        for conversation, seqs in by_conversation.items():
            found = conversation_log.entry_texts(live, conn, conversation, seqs)
            texts.update({(conversation, seq): text for seq, text in found.items()})
        with copy.write() as txn:
            for entry, info in page:
                clock.set(entry.at)
                if entry.kind is EntryKind.CREATED:
                    conversation_log.create(
                        copy,
                        txn,
                        [person],
                        surface=info.surface,
                        incognito=info.incognito,
                        agent=info.agent,
                        conversation=info.id,
                    )
                    continue
                theirs = entry.author == person
                other = (
                    entry.author is not None
                    and not theirs
                    and (entry.kind is EntryKind.USER or entry.author in others)
                )
                if other and entry.kind is not EntryKind.EXCISION:
                    left_out.setdefault(info.id, []).append(entry.seq)
                    left += 1
                body = {k: v for k, v in entry.body.items() if k != "participant_removed"}
                conversation_log.append_entry(
                    copy,
                    txn,
                    info.id,
                    entry.kind,
                    ref=entry.ref,
                    author=None if other else entry.author,
                    status=entry.status,
                    body=body,
                    text=None if other else texts.get((entry.conversation, entry.seq)),
                )
        steps.advance(len(page))
    if left_out:
        clock.set(live.now())
        with copy.write() as txn:
            for conversation, seqs in left_out.items():
                conversation_log.excise(
                    copy, txn, conversation, seqs, COPIER, LEFT_OUT, body={"review_copy": True}
                )
    return left


# ---- the journal ------------------------------------------------------------------------


def _copy_journal(
    live: Store,
    conn: Any,
    copy: Store,
    clock: ManualClock,
    person: PersonId,
    held: set[ConversationId],
    shared: set[ConversationId],
    through: int,
    steps: _Steps,
) -> None:
    """The person's journal after its first event, event by event at the times it has:
    the copy's positions are the live store's."""
    after = 1
    while after < through:
        events = list(journal.events(conn, person, after_seq=after, limit=PAGE))
        events = [e for e in events if e.seq <= through]
        if not events:
            break
        texts = journal.texts(live, conn, person, [e.seq for e in events if e.has_payload])
        with copy.write() as txn:
            for moment in _moments(events):
                clock.set(moment[0].at)  # one batch, one moment, as it was appended
                batch = []
                for event in moment:
                    origin = _origin(event)
                    text = texts.get(event.seq)
                    if event.type is EventType.DIGEST_LINE_ADDED and origin in shared:
                        text = None  # a shared conversation's summary may hold others' words
                    keep_origin = origin if text is not None and origin in held else None
                    batch.append(
                        NewEvent(
                            event.type, event.actor, event.body, event.cause, text, keep_origin
                        )
                    )
                journal.append(copy, txn, person, batch)
        steps.advance(events[-1].seq - after)
        after = events[-1].seq


def _moments(events: list[Event]) -> list[list[Event]]:
    """Runs of consecutive events that share their time: each was one batch (or reads the
    same as one), appended together so the copy's times are the live store's."""
    runs: list[list[Event]] = []
    for event in events:
        if runs and runs[-1][-1].at == event.at:
            runs[-1].append(event)
        else:
            runs.append([event])
    return runs


def _origin(event: Event) -> ConversationId | None:
    """The conversation whose key also seals an event's text (C4), as its writer chose."""
    body = event.body
    if isinstance(body, NoteAdded | CandidateSuggested):
        return body.origin
    if isinstance(body, DigestLineAdded):
        return body.conversation
    return None
