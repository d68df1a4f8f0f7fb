"""Keyed pseudonyms: how records that outlive a person name them without naming them.

A pseudonym is `~` and 32 hex digits of a keyed BLAKE2b of the name under a key derived
from the store's signing key (`Store.hidden_name`), so only this store can recognise it and
nobody can reverse it. Person ids never start with `~`.

Chained headers commit to the *pseudonym* of every actor, author and participant (the
clear id stays in its queryable column). Erasing a person then replaces their clear id
with the pseudonym in the rows that must remain (others' journals, shared conversation
logs, the erasure chain) and every chain still verifies. Rows written before this scheme
committed to the clear id; `header_of_row` recognises them, and they keep it.
"""

from __future__ import annotations

from collections.abc import Callable

from engram.store.store import Store

PREFIX = "~"


def is_pseudonym(name: str | None) -> bool:
    """Whether a stored name is already a pseudonym."""
    return name is not None and name.startswith(PREFIX)


def pseudonym(store: Store, name: str) -> str:
    """The store's pseudonym for a name (a pseudonym is its own)."""
    if is_pseudonym(name):
        return name
    known = store.pseudonyms.get(name)
    if known is None:
        known = store.pseudonyms[name] = PREFIX + store.hidden_name("who:" + name)[:32]
    return known


def committed(store: Store, name: str | None) -> str | None:
    """What a chained header commits to for a stored actor, author or participant."""
    return None if name is None else pseudonym(store, name)


def header_of_row(
    store: Store,
    name: str | None,
    build: Callable[[str | None], bytes],
    matches: Callable[[bytes], bool],
) -> bytes:
    """The chained header of a stored row: built with the pseudonym of `name`, or — for a
    row written before pseudonyms, when only that `matches` its hash — with the clear name.
    Built once in the usual case (verify walks every row)."""
    new = committed(store, name)
    head = build(new)
    if new == name or matches(head):
        return head
    legacy = build(name)
    return legacy if matches(legacy) else head


def headers_of_row(
    store: Store, name: str | None, build: Callable[[str | None], bytes]
) -> tuple[bytes, Callable[[], bytes] | None]:
    """A stored row's chained header built with the pseudonym of `name`, and how to build
    the one a row written before pseudonyms committed to (None when they are the same):
    for a walk that hashes each row once and tries the other header only on a mismatch."""
    new = committed(store, name)
    return build(new), (None if new == name else lambda: build(name))
