"""The notes memory_search looks through, decrypted and split into words once per person,
audience and journal state, instead of on every search (issue 10: the HTTP benchmark).

A pool is the scoped read (S1-S3: scope filter first, then ranking) for one person and one
set of eligible scopes, so audiences never share a pool unless they may see the same notes.
It is current while the person's journal has not moved, or has moved only by usage records
and audit-only events such as an export (they change no note, text or rank); any other
event, from this process or another, and an erased-and-rebuilt journal (the held head no
longer there) read it again — and a pool whose texts no longer stand (removed, or the
person erased by another process whose release has not yet been seen) is let go at once.
The clock moving on alone takes out the transient notes whose four hours are over (M3),
as every read does.
Pools live in the store's plaintext caches: closing (locking) the store and every erasure
it commits drop them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engram.engine.assembly import TextNote
from engram.engine.fold import AUDIT_ONLY
from engram.engine.merge import expired, expiry
from engram.engine.words import terms
from engram.model.event_bodies import shreds_text
from engram.model.events import EventType
from engram.model.ids import PersonId
from engram.model.scope import Audience, Scope
from engram.runtime.context import journal_now, read_scoped
from engram.store import journal
from engram.store.store import Store

POOL_NOTES = 200  # the best-ranked visible notes a search looks through
CACHED_POOLS = 64
LOOK_AHEAD = 256  # usage records after a pool's head looked through before reading anew
_UNCHANGING = frozenset({EventType.ITEM_USED, *AUDIT_ONLY})


@dataclass(frozen=True, slots=True)
class Worded:
    """A visible note, its text and the text's words."""

    item: TextNote
    words: frozenset[str]


@dataclass(slots=True)
class _Pool:
    head: tuple[int, bytes]
    notes: tuple[Worded, ...]
    ends: datetime | None  # when the first of its transient notes is over (M3)

    def at(self, now: datetime) -> tuple[Worded, ...]:
        """Its notes still current at `now`: past `ends`, without those that are over (the
        same best-ranked notes a read would find, less the expired, as read_scoped does)."""
        if self.ends is not None and self.ends <= now:
            self.notes = tuple(w for w in self.notes if not expired(w.item.note, now))
            self.ends = _ends(self.notes)
        return self.notes


def _ends(notes: Sequence[Worded]) -> datetime | None:
    """The earliest moment one of `notes` is over (M3), None when none ever is."""
    return min(
        (m for w in notes if (m := expiry(w.item.note)) is not None),
        default=None,
    )


@dataclass(eq=False)
class _Pools:
    lock: threading.Lock = field(default_factory=threading.Lock)
    held: OrderedDict[tuple[PersonId, frozenset[Scope]], _Pool] = field(default_factory=OrderedDict)


def search_pool(store: Store, person: PersonId, audience: Audience) -> Sequence[Worded] | None:
    """The best-ranked notes `audience` may receive, with their words; None when memory
    could not be read (A9, R2)."""
    audience.require_subject(person)
    key = (person, audience.scopes)
    pools: _Pools = store.plaintext_caches.setdefault("search_pools", _Pools())
    with pools.lock:
        held = pools.held.get(key)
    known: dict[int, Worded] = {}
    with store.read() as conn:
        if held is not None and (
            now := journal.head_if_only(conn, person, held.head, _UNCHANGING, LOOK_AHEAD)
        ):
            moment = journal_now(store, conn, person) if held.ends is not None else None
            with pools.lock:
                held.head = now
                return held.notes if moment is None else held.at(moment)
        head = journal.head(conn, person)  # read first: a pool is never older than its head
        if held is not None and _texts_stand(conn, person, held.head):
            # The same journal, moved on, with no text removed since: a text stays what it
            # was at its position, so the ones the old pool opened and split into words
            # are not opened again.
            known = {w.item.note.text_seq: w for w in held.notes}
        elif held is not None:  # texts removed, or the person erased elsewhere: let go now
            with pools.lock:
                if pools.held.get(key) is held:
                    del pools.held[key]
    texts = {seq: w.item.text for seq, w in known.items()}
    read = read_scoped(store, person, audience, ((None, POOL_NOTES),), texts)
    if not read.readable:
        return None
    notes = tuple(_worded(item, known.get(item.note.text_seq)) for item in read.notes)
    if head is not None:
        with pools.lock:
            pools.held[key] = _Pool(head, notes, _ends(notes))
            pools.held.move_to_end(key)
            while len(pools.held) > CACHED_POOLS:
                pools.held.popitem(last=False)
    return notes


def pool_ends(store: Store, person: PersonId, audience: Audience) -> datetime | None:
    """When the first transient note of the pool held for `audience` is over (M3): an
    answer made from the pool holds until then at most. None: no held pool, or none of its
    notes is transient."""
    pools = store.plaintext_caches.get("search_pools")
    if not isinstance(pools, _Pools):
        return None
    with pools.lock:
        held = pools.held.get((person, audience.scopes))
        return None if held is None else held.ends


def _worded(item: TextNote, before: Worded | None) -> Worded:
    if before is not None and before.item.text == item.text:
        return Worded(item, before.words)
    return Worded(item, frozenset(terms(item.text)))


def _texts_stand(conn: Any, person: PersonId, head: tuple[int, bytes]) -> bool:
    """Whether the journal still holds `head` (not erased and rebuilt) and no event after
    it removed texts (a conversation deleted, a note forgotten: in this process that is an
    erasure, which drops every pool; in another, this is where it shows)."""
    if journal.entry_hash(conn, person, head[0]) != head[1]:
        return False
    since = list(journal.events(conn, person, after_seq=head[0], limit=LOOK_AHEAD + 1))
    return len(since) <= LOOK_AHEAD and not any(shreds_text(e.body) for e in since)
