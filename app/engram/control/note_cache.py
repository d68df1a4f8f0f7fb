"""What the inspector keeps in memory about one person's notes while the store is open, so
typed search and time travel cost what they show, not the person's size (issue 17 item 9).

Two parts, each built on first use (the inspector warms them up in the background when a
person opens) and brought up to date from the journal's new events on every use:

- the journal folded once, with snapshots (engine.fold_timeline): time travel folds only
  the events between the nearest snapshot and the moment;
- every note text, decrypted once and case-folded: a text search is a scan in memory.

Where it lives — the same decision as the person-wide search index (runtime.person_search):
in the store's plaintext caches, never on disk. Closing (locking) the store, every erasure
it commits and every release another process asks for drop it; a journal that lost its
held head (erased and rebuilt) or deleted a conversation since is read again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from engram.engine.fold_timeline import FoldTimeline
from engram.model.event_bodies import shreds_text
from engram.model.ids import PersonId
from engram.store import journal
from engram.store.store import Store

CACHE = "person_notes"
PEOPLE_HELD = 4  # the people whose notes stay folded in memory, most recently used
STEP = 5_000  # events folded, or read for their texts, in one step of a build


class Cancelled(Exception):
    """The caller gave up while the cache was being built; nothing was kept."""


@dataclass(eq=False)
class PersonNotes:
    """One person's folded journal and note texts, as of `head` (the journal's last event
    folded in). `memo` holds what callers derived from this head; a new head empties it.
    While being built a step at a time, the parts done so far wait in `building*`."""

    person: PersonId
    head: tuple[int, bytes] | None = None  # seq and entry hash of the last event folded
    timeline: FoldTimeline | None = None
    texts: dict[int, str] | None = None  # text_seq -> case-folded text
    memo: dict[object, Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)
    building: FoldTimeline | None = None
    building_texts: dict[int, str] = field(default_factory=dict)
    texts_upto: int = 0  # building_texts holds the texts of events up to this seq


@dataclass(eq=False)
class _Held:
    lock: threading.Lock = field(default_factory=threading.Lock)
    people: OrderedDict[PersonId, PersonNotes] = field(default_factory=OrderedDict)


@contextmanager
def person_notes(
    store: Store,
    person: PersonId,
    *,
    texts: bool = False,
    cancelled: Callable[[], bool] = lambda: False,
) -> Iterator[PersonNotes]:
    """The person's cache, current with the journal (with `texts`, holding every note
    text), locked against other threads while the caller reads it."""
    cache = _cache(store, person)
    with cache.lock:
        _guarded(cache, lambda: _catch_up(store, cache, texts, cancelled, None))
        yield cache


def build_step(store: Store, person: PersonId) -> bool:
    """Build the person's cache one bounded step further (about STEP events folded or
    texts decrypted), so a background warm-up never holds a worker for long; whether
    more remains."""
    cache = _cache(store, person)
    with cache.lock:
        return _guarded(cache, lambda: _catch_up(store, cache, True, lambda: False, STEP))


def _cache(store: Store, person: PersonId) -> PersonNotes:
    held: _Held = store.plaintext_caches.setdefault(CACHE, _Held())
    with held.lock:
        cache = held.people.setdefault(person, PersonNotes(person))
        held.people.move_to_end(person)
        while len(held.people) > PEOPLE_HELD:  # a server asked about many people
            held.people.popitem(last=False)
        return cache


def _guarded(cache: PersonNotes, work: Callable[[], bool]) -> bool:
    try:
        return work()
    except Cancelled:
        raise  # what was built before stays good
    except BaseException:  # a fold half applied must never be extended again
        _forget(cache)
        raise


def _forget(cache: PersonNotes) -> None:
    cache.timeline, cache.texts, cache.head, cache.building = None, None, None, None
    _forget_texts(cache)
    cache.memo.clear()


def _forget_texts(cache: PersonNotes) -> None:
    cache.texts, cache.building_texts, cache.texts_upto = None, {}, 0


def _catch_up(
    store: Store,
    cache: PersonNotes,
    want_texts: bool,
    cancelled: Callable[[], bool],
    budget: int | None,
) -> bool:
    """Bring the cache up to the journal: all of it, or (with `budget`) one step of what
    remains to build. Whether more remains."""
    person = cache.person
    with store.read() as conn:
        if cache.timeline is not None and cache.head is not None:
            seq, digest = cache.head
            if journal.entry_hash(conn, person, seq) != digest:  # another journal now
                _forget(cache)
            else:
                new = list(journal.events(conn, person, after_seq=seq))
                if new:
                    cache.timeline.detach_head()
                    cache.timeline.extend(new)
                    if any(shreds_text(e.body) for e in new):
                        _forget_texts(cache)  # some texts may be gone: read them again
                    elif cache.texts is not None:
                        fresh = journal.note_texts_after(store, conn, person, seq)
                        cache.texts.update(_folded(fresh))
                    cache.head = (new[-1].seq, journal.entry_hash(conn, person, new[-1].seq))
                    cache.memo.clear()
        while cache.timeline is None:
            if cancelled():
                raise Cancelled
            _fold_step(conn, cache, budget or STEP)
            if budget is not None:
                return True
        while want_texts and cache.texts is None:
            if cancelled():
                raise Cancelled
            _texts_step(store, conn, cache, budget or STEP)
            if budget is not None:
                return cache.texts is None
    return False


def _fold_step(conn: Any, cache: PersonNotes, limit: int) -> None:
    """Fold up to `limit` more events into the timeline being built; at the journal's end
    it becomes the cache's timeline."""
    person = cache.person
    building = cache.building or FoldTimeline(person)
    events = list(journal.events(conn, person, after_seq=building.head.seq, limit=limit))
    building.extend(events)
    if len(events) < limit:
        last = building.head.seq
        cache.timeline, cache.building = building, None
        cache.head = (last, journal.entry_hash(conn, person, last))
        cache.memo.clear()
    else:
        cache.building = building


def _texts_step(store: Store, conn: Any, cache: PersonNotes, limit: int) -> None:
    """Decrypt the texts of the next `limit` events' notes; once up to the held head,
    they become the cache's texts (catching up adds later ones)."""
    assert cache.head is not None
    start, until = cache.texts_upto, cache.texts_upto + limit
    cache.building_texts.update(
        _folded(journal.note_texts_after(store, conn, cache.person, start, until))
    )
    cache.texts_upto = until
    if until >= cache.head[0]:
        cache.texts, cache.building_texts, cache.texts_upto = cache.building_texts, {}, 0
        cache.memo.clear()


def _folded(texts: dict[int, str]) -> dict[int, str]:
    return {seq: text.casefold() for seq, text in texts.items()}
