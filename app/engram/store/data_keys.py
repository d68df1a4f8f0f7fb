"""A store's data keys: one random key per person and per conversation (and per
pending-erasure mark), kept wrapped under the store key (KEK) in `data_keys` and unwrapped
on demand. Text about a person learned in a conversation is sealed under a key derived from
both (C4), so destroying either key crypto-shreds that text.

The store owns one `DataKeys` (`Store.keys`), which holds the KEK and the unwrapped keys;
`person_key_ref` and its siblings give the reference each key is stored under.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from sqlalchemy import Connection, Table, delete, insert, select

from engram.model.errors import CorruptStore
from engram.store import contexts, crypto, schema
from engram.store.crypto import SealBroken


class KeyGone(Exception):
    """A data key was destroyed (erasure or conversation deletion): its text is unreadable."""


class DataKeys:
    """Creating, unwrapping, caching and destroying one store's data keys.

    Unwrapped keys are cached while the store is open. A key created by an open write stays
    in that thread's fresh keys until the write commits (`commit_fresh`, from Store.write),
    so a rolled-back key never outlives the row that was never written. The cache is
    changed only by single dict operations (atomic under the GIL) and copied before it is
    walked, so the threads that share a store need no lock for it.
    """

    def __init__(
        self,
        store_id: str,
        kek: bytes,
        now_micros: Callable[[], int],
        touched: Callable[[Table, str], None],
    ) -> None:
        self._store_id = store_id
        self._kek = kek
        self._now_micros = now_micros
        # Records a row this thread's open write changed (Store.touched: the signed ledger).
        self._touched = touched
        self._keys: dict[str, bytes] = {}
        self._local = threading.local()

    @property
    def kek(self) -> bytes:
        """The store key, for the keyring ("remember on this computer")."""
        return self._kek

    @property
    def _fresh(self) -> dict[str, bytes]:
        """Keys created by this thread's open write (threads write through one store: the
        HTTP face, a learning worker), so one thread's commit never promotes another's."""
        fresh: dict[str, bytes] | None = getattr(self._local, "fresh", None)
        if fresh is None:
            fresh = self._local.fresh = {}
        return fresh

    def commit_fresh(self) -> None:
        """This thread's write committed: its fresh keys join the cache."""
        self._keys.update(self._fresh)

    def drop_fresh(self) -> None:
        """This thread's write is over: its fresh keys are forgotten (cached if it committed)."""
        self._fresh.clear()

    def forget(self) -> None:
        """Drop every unwrapped key (a release request); they are unwrapped again on demand."""
        self._keys.clear()

    def close(self) -> None:
        """Drop every unwrapped key and the KEK: nothing opens any more."""
        self._keys.clear()
        self._kek = b""

    def cached(self) -> dict[str, bytes]:
        """A copy of the unwrapped keys held now (what a release must have let go)."""
        return dict(self._keys)

    def data_key(self, conn: Connection, key_ref: str, *, create: bool = False) -> bytes:
        """A person's or conversation's random data key, unwrapped (KeyGone if destroyed)."""
        cached = self._keys.get(key_ref) or self._fresh.get(key_ref)
        if cached is not None:
            return cached
        wrapped = conn.execute(
            select(schema.data_keys.c.wrapped).where(schema.data_keys.c.key_ref == key_ref)
        ).scalar()
        aad = contexts.data_key(self._store_id, key_ref)
        if wrapped is None:
            if not create:
                raise KeyGone(key_ref)
            key = crypto.random_key()
            conn.execute(
                insert(schema.data_keys).values(
                    key_ref=key_ref,
                    wrapped=crypto.seal(self._kek, key, aad),
                    created_at=self._now_micros(),
                )
            )
            self._touched(schema.data_keys, key_ref)
            self._fresh[key_ref] = key
            return key
        else:
            try:
                key = crypto.unseal(self._kek, wrapped, aad)
            except SealBroken:
                raise CorruptStore(
                    f"The store is damaged: the data key {key_ref!r} does not open."
                ) from None
        self._keys[key_ref] = key
        return key

    def key_opens(self, key_ref: str, wrapped: bytes) -> bool:
        """Whether a wrapped data key row opens (verify; bypasses the key cache)."""
        try:
            crypto.unseal(self._kek, wrapped, contexts.data_key(self._store_id, key_ref))
        except SealBroken:
            return False
        return True

    def destroy_key(self, conn: Connection, key_ref: str) -> bool:
        """Crypto-shred: delete a wrapped data key. True if it existed."""
        self._keys.pop(key_ref, None)
        # Derived note keys need this key too: forget every one of them.
        # (Over a copy: another thread may cache a key meanwhile.)
        for ref in [r for r in list(self._keys) if r.startswith("note:")]:
            self._keys.pop(ref, None)
        result = conn.execute(delete(schema.data_keys).where(schema.data_keys.c.key_ref == key_ref))
        self._touched(schema.data_keys, key_ref)
        return bool(result.rowcount)

    def text_key(
        self, conn: Connection, person: str, origin: str | None, *, create: bool = False
    ) -> tuple[str, bytes]:
        """The key a person's text is sealed under: the person's, or person+conversation (C4)."""
        person_key = self.data_key(conn, person_key_ref(person), create=create)
        if origin is None:
            return person_key_ref(person), person_key
        ref = note_key_ref(person, origin)
        derived = self._keys.get(ref)
        if derived is None:
            conversation_ref = conversation_key_ref(origin)
            conversation_key = self.data_key(conn, conversation_ref, create=create)
            derived = crypto.note_key(person_key, conversation_key)
            if not {person_key_ref(person), conversation_ref} & self._fresh.keys():
                self._keys[ref] = derived  # both parents are committed keys
        return ref, derived

    def key_for_ref(self, conn: Connection, key_ref: str) -> bytes:
        """Resolve a recorded key reference (KeyGone if any part was destroyed)."""
        kind, _, rest = key_ref.partition(":")
        if kind == "note":
            person, _, origin = rest.rpartition(":")
            return self.text_key(conn, person, origin)[1]
        return self.data_key(conn, key_ref)


def person_key_ref(person: str) -> str:
    """Key reference of a person's data key."""
    return f"person:{person}"


def conversation_key_ref(conversation: str) -> str:
    """Key reference of a conversation's data key."""
    return f"conversation:{conversation}"


def note_key_ref(person: str, conversation: str) -> str:
    """Key reference of text learned about a person in a conversation."""
    return f"note:{person}:{conversation}"


def erasure_mark_key_ref(mark_id: int) -> str:
    """Key reference of the key a pending-erasure mark's sealed ciphertexts are under."""
    return f"erasure-probes:{mark_id}"
