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
asks for drop them, as they drop the other caches of decrypted text. At most HELD answers
are kept, none for longer than MAX_AGE_S.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from engram.store.freshness import Mark
from engram.store.store import Store

CACHE = "api_answers"
HELD = 2_000
MAX_AGE_S = 300.0


@dataclass(eq=False)
class _Kept:
    lock: threading.Lock = field(default_factory=threading.Lock)
    answers: OrderedDict[Hashable, tuple[Mark, float, Any]] = field(default_factory=OrderedDict)


def key_digest(authorization: str) -> bytes:
    """What stands for a key in what is kept (the key itself is not kept)."""
    return hashlib.blake2b(authorization.encode(), digest_size=16).digest()


def kept(store: Store, key: Hashable, mark: Mark) -> Any | None:
    """What was kept under `key` while the mark was `mark`, if it still is."""
    held = _held(store)
    with held.lock:
        found = held.answers.get(key)
        if found is None:
            return None
        if found[0] != mark or time.monotonic() - found[1] > MAX_AGE_S:
            del held.answers[key]
            return None
        held.answers.move_to_end(key)
        return found[2]


def peek(store: Store, key: Hashable) -> Any | None:
    """What was kept under `key`, whatever the mark (the caller checks it is current)."""
    held = _held(store)
    with held.lock:
        found = held.answers.get(key)
        if found is None or time.monotonic() - found[1] > MAX_AGE_S:
            return None
        return found[2]


def generation(store: Store) -> object:
    """What stands for the kept answers as they are now: taken before a mark, and given to
    `keep`, it says whether they were dropped (the store locked, an erasure committed)
    while the answer was being read."""
    return _held(store)


def keep(store: Store, key: Hashable, mark: Mark, value: Any, since: object) -> None:
    """Keep `value`, read after `mark` was taken, under `key` — unless what was kept was
    dropped since `generation` gave `since`: an answer read across an erasure is not kept,
    not even under a mark that can no longer match."""
    held = store.plaintext_caches.get(CACHE)
    if held is not since or not isinstance(held, _Kept):
        return
    with held.lock:
        held.answers[key] = (mark, time.monotonic(), value)
        held.answers.move_to_end(key)
        while len(held.answers) > HELD:
            held.answers.popitem(last=False)


def _held(store: Store) -> _Kept:
    found: _Kept = store.plaintext_caches.setdefault(CACHE, _Kept())
    return found
