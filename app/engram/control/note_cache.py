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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from engram.engine.fold_timeline import FoldTimeline
from engram.model.events import EventType
from engram.model.ids import PersonId
from engram.store import journal
from engram.store.store import Store

CACHE = "person_notes"
CHECK_CANCEL_EVERY = 2_000  # events folded between two looks at the cancel flag
_SHREDS_TEXT = frozenset({EventType.CONVERSATION_DELETED})


class Cancelled(Exception):
    """The caller gave up while the cache was being built; nothing was kept."""


@dataclass(eq=False)
class PersonNotes:
    """One person's folded journal and note texts, as of `head` (the journal's last event
    folded in). `memo` holds what callers derived from this head; a new head empties it."""

    person: PersonId
    head: tuple[int, bytes] | None = None  # seq and entry hash of the last event folded
    timeline: FoldTimeline | None = None
    texts: dict[int, str] | None = None  # text_seq -> case-folded text
    memo: dict[object, Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)


@dataclass(eq=False)
class _Held:
    lock: threading.Lock = field(default_factory=threading.Lock)
    people: dict[PersonId, PersonNotes] = field(default_factory=dict)


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
    held: _Held = store.plaintext_caches.setdefault(CACHE, _Held())
    with held.lock:
        cache = held.people.setdefault(person, PersonNotes(person))
    with cache.lock:
        try:
            _catch_up(store, cache, texts, cancelled)
        except Cancelled:
            raise  # what was built before stays good
        except BaseException:  # a fold half applied must never be extended again
            cache.timeline, cache.texts, cache.head = None, None, None
            cache.memo.clear()
            raise
        yield cache


def _catch_up(
    store: Store, cache: PersonNotes, want_texts: bool, cancelled: Callable[[], bool]
) -> None:
    person = cache.person
    with store.read() as conn:
        if cache.timeline is not None and cache.head is not None:
            seq, digest = cache.head
            if journal.entry_hash(conn, person, seq) != digest:  # another journal now
                cache.timeline, cache.texts = None, None
            else:
                new = list(journal.events(conn, person, after_seq=seq))
                if new:
                    cache.timeline.detach_head()
                    cache.timeline.extend(new)
                    if cache.texts is not None and any(e.type in _SHREDS_TEXT for e in new):
                        cache.texts = None  # some texts may be gone: read them all again
                    elif cache.texts is not None:
                        fresh = journal.note_texts_after(store, conn, person, seq)
                        cache.texts.update(_folded(fresh))
                    cache.head = (new[-1].seq, journal.entry_hash(conn, person, new[-1].seq))
                    cache.memo.clear()
        if cache.timeline is None:
            cache.timeline = _fold_all(conn, person, cancelled)
            last = cache.timeline.head.seq
            cache.head = (last, journal.entry_hash(conn, person, last))
            cache.texts = None
            cache.memo.clear()
        if want_texts and cache.texts is None:
            if cancelled():
                raise Cancelled
            cache.texts = _folded(journal.note_texts_after(store, conn, person, 0))
            cache.memo.clear()


def _fold_all(conn: Any, person: PersonId, cancelled: Callable[[], bool]) -> FoldTimeline:
    timeline = FoldTimeline(person)
    batch = []
    for event in journal.events(conn, person):
        batch.append(event)
        if len(batch) >= CHECK_CANCEL_EVERY:
            if cancelled():
                raise Cancelled
            timeline.extend(batch)
            batch = []
    timeline.extend(batch)
    return timeline


def _folded(texts: dict[int, str]) -> dict[int, str]:
    return {seq: text.casefold() for seq, text in texts.items()}
