"""A write that erases leaves a pending-erasure mark: its bytes may still be in the files.

The code that erases (erasure.py, conversation_log.excise) says so with `erasing`, which
hooks the mark into the write's path (`WriteTxn.before_commit`): the mark is written inside
the same transaction, after everything the write deleted, with each deleted ciphertext to
look for, sealed under a key of the mark's own. Finishing the erasure (pending_erasure.py)
looks for them in the files and, once none is left, deletes the mark and destroys its key.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from sqlalchemy import func, insert, select

from engram.store import contexts, crypto, schema
from engram.store.data_keys import erasure_mark_key_ref
from engram.store.dialect import sqlite_path
from engram.store.file_scan import WINDOW
from engram.store.unlocked import UnlockedStore
from engram.store.write_txn import WriteTxn

P = schema.pending_erasures
# A mark's sealed blob: this prefix, then each erased ciphertext as (length, bytes). Marks
# written before it hold only the last WINDOW bytes of each, end to end.
FRAMED = contexts.ERASED_CIPHERTEXTS
_LENGTH = struct.Struct(">I")


def frame(needles: Iterable[bytes]) -> bytes:
    """The ciphertexts a mark keeps (whole, so the scan can look for every window)."""
    return FRAMED + b"".join(_LENGTH.pack(len(n)) + n for n in needles)


def unframe(blob: bytes) -> list[bytes]:
    """The ciphertexts (or, from an older mark, their last bytes) a mark kept."""
    if not blob.startswith(FRAMED):
        return [blob[i : i + WINDOW] for i in range(0, len(blob), WINDOW)]
    found, at = [], len(FRAMED)
    while at + _LENGTH.size <= len(blob):
        (length,) = _LENGTH.unpack_from(blob, at)
        found.append(blob[at + _LENGTH.size : at + _LENGTH.size + length])
        at += _LENGTH.size + length
    return found


def erasing(store: UnlockedStore, txn: WriteTxn, needles: Iterable[bytes] = ()) -> None:
    """Note that this write erases, deleting `needles` (ciphertexts): before it commits it
    leaves one mark for everything it deleted, and once committed the store drops its
    plaintext caches (Store.write)."""
    txn.needles.extend(needles)
    if not txn.erased:
        txn.erased = True
        txn.before_commit.append(lambda: mark(store, txn))


def mark(store: UnlockedStore, txn: WriteTxn) -> None:
    """Write the mark of an erasing write (its before-commit hook): that its bytes may still
    be in the files, with each deleted ciphertext to look for (sealed under a key of the
    mark's own, destroyed when the erasure is finished)."""
    if sqlite_path(store.url) is None:
        return  # a server database: destroyed keys are the guarantee (DESIGN, the store)
    needles = sorted({bytes(n) for n in txn.needles if len(n) >= WINDOW})
    mark_id = int(txn.conn.execute(select(func.coalesce(func.max(P.c.id), 0))).scalar_one()) + 1
    key = store.keys.data_key(txn.conn, erasure_mark_key_ref(mark_id), create=True)
    sealed = crypto.seal(key, frame(needles), contexts.erasure_probes(store.info.id, mark_id))
    txn.conn.execute(insert(P).values(id=mark_id, at=store.now_micros(), probes=sealed))
    store.touched(P, mark_id)
