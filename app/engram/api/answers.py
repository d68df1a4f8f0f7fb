"""Answers the memory API gave, kept while nothing they were read from has changed (issue 19
item 3): who a key is and which agent and person it acts for, and the JSON of a page of
items or of a search.

Each is kept with the mark it was read under (store.freshness: the signed heads of the
ledger, which holds keys and agent configurations, and of the person's journal). A request
reads the mark now — one small read — and is given what was kept only if the mark is the
same; a write by anyone, in any process, moves it. A key revoked, an agent changed, a note
edited or a person erased is therefore seen by the very next request. What was read is
stored only after its mark was taken, so an answer newer than its mark can be kept under
it but never one older.

The kept answers hold note texts in clear, so they live in the store's plaintext caches:
closing (locking) the store, every erasure it commits and every release another process
asks for drop them, as they drop the other caches of decrypted text (a request answered
from memory looks for a release first: it runs no statement that would see one). A new
mark for a person drops every answer kept for them under an older one; an answer older
than MAX_AGE_S goes at the next request, and one kept with an end (a search that looked
through a transient note, over at four hours: M3) goes when the store's clock reaches it;
at most HELD answers and MAX_BYTES of them are
kept. Only answers that read memory whole are kept, never one that says it could not.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engram.store.freshness import Mark
from engram.store.store import Store

CACHE = "api_answers"
HELD = 2_000
MAX_BYTES = 32 * 1024 * 1024  # of answers' JSON
MAX_AGE_S = 300.0
SWEEP_EVERY_S = 10.0


@dataclass(frozen=True, slots=True)
class _Entry:
    mark: Mark
    at: float
    value: Any
    size: int
    ends: datetime | None = None  # by the store's clock


@dataclass(eq=False)
class _Kept:
    lock: threading.Lock = field(default_factory=threading.Lock)
    answers: OrderedDict[Hashable, _Entry] = field(default_factory=OrderedDict)
    size: int = 0
    swept: float = field(default_factory=time.monotonic)
    # Stands for this set of answers: a plain object, so that nothing kept refers back to
    # the set (a cycle would keep dropped answers in memory until a full collection).
    token: object = field(default_factory=object)


def key_digest(authorization: str) -> bytes:
    """What stands for a key in what is kept (the key itself is not kept)."""
    return hashlib.blake2b(authorization.encode(), digest_size=16).digest()


def person_of(key: Hashable) -> object:
    """The person a kept key is about (every key is (what, caller, person, …))."""
    return key[2] if isinstance(key, tuple) and len(key) > 2 else None


def kept(store: Store, key: Hashable, mark: Mark) -> Any | None:
    """What was kept under `key` while the mark was `mark`, if it still is. A kept answer
    under another mark for the same person means the person's memory changed: every answer
    kept for them under an older mark goes."""
    held = _held(store)
    with held.lock:
        _sweep(held)
        found = held.answers.get(key)
        if found is None:
            return None
        if found.mark != mark:
            _drop_person(held, person_of(key), mark)
            return None
        if found.ends is not None and found.ends <= store.now():
            held.size -= held.answers.pop(key).size
            return None
        held.answers.move_to_end(key)
        return found.value


def peek(store: Store, key: Hashable) -> Any | None:
    """What was kept under `key`, whatever the mark (the caller checks it is current)."""
    held = _held(store)
    with held.lock:
        _sweep(held)
        found = held.answers.get(key)
        return None if found is None else found.value


def generation(store: Store) -> object:
    """What stands for the kept answers as they are now: taken before a mark, and given to
    `keep`, it says whether they were dropped (the store locked, an erasure committed)
    while the answer was being read."""
    return _held(store).token


def keep(
    store: Store,
    key: Hashable,
    mark: Mark,
    value: Any,
    since: object,
    ends: datetime | None = None,
) -> None:
    """Keep `value`, read after `mark` was taken, under `key` (until the store's clock
    reaches `ends`, if given) — unless what was kept was dropped since `generation` gave
    `since`: an answer read across an erasure is not kept, not even under a mark that can
    no longer match."""
    held = store.plaintext_caches.get(CACHE)
    if not isinstance(held, _Kept) or held.token is not since:
        return
    size = len(value) if isinstance(value, bytes) else 256
    if size > MAX_BYTES // 8:
        return  # one answer this big is read again rather than kept
    with held.lock:
        old = held.answers.pop(key, None)
        if old is not None:
            held.size -= old.size
        held.answers[key] = _Entry(mark, time.monotonic(), value, size, ends)
        held.size += size
        while len(held.answers) > HELD or held.size > MAX_BYTES:
            _, dropped = held.answers.popitem(last=False)
            held.size -= dropped.size


def _sweep(held: _Kept) -> None:
    """Drop what is older than MAX_AGE_S (looked at every SWEEP_EVERY_S at most)."""
    now = time.monotonic()
    if now - held.swept < SWEEP_EVERY_S:
        return
    held.swept = now
    for key in [k for k, e in held.answers.items() if now - e.at > MAX_AGE_S]:
        held.size -= held.answers.pop(key).size


def _drop_person(held: _Kept, person: object, mark: Mark) -> None:
    if person is None:
        return
    for key in [k for k, e in held.answers.items() if person_of(k) == person and e.mark != mark]:
        held.size -= held.answers.pop(key).size


def _held(store: Store) -> _Kept:
    found: _Kept = store.plaintext_caches.setdefault(CACHE, _Kept())
    return found
