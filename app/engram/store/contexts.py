"""Every encryption context of the store, in one place: the associated data each seal is
bound to, and the domains that keep each digest and derived key apart.

A seal (XChaCha20-Poly1305, `crypto.seal`) opens only with the associated data it was made
with, so each names what the ciphertext is and where it belongs (store, row, key): a sealed
value moved to another row, or another store, does not open. A digest or derived key is
separated by a domain of its own, so no two purposes ever share one.

These strings are part of the on-disk format: changing one makes every store written
before unreadable (tests/unit/test_store_contexts.py pins each).
"""

from __future__ import annotations

# ---- associated data of seals ---------------------------------------------------------


def kek_by_passphrase(store_id: str) -> bytes:
    """The store key (KEK), sealed under the key derived from the passphrase."""
    return f"engram-kek|{store_id}".encode()


def signing_seed(store_id: str) -> bytes:
    """The store's signing seed, sealed under the KEK."""
    return f"engram-signing|{store_id}".encode()


def data_key(store_id: str, key_ref: str) -> bytes:
    """A data key (person, conversation, pending-erasure mark), wrapped under the KEK."""
    return f"engram-datakey|{store_id}|{key_ref}".encode()


def journal_payload(store_id: str, person: str, seq: int, key_ref: str) -> bytes:
    """A journal entry's text, bound to its row and the key it is sealed under."""
    return f"journal|{store_id}|{person}|{seq}|{key_ref}".encode()


def person_name(store_id: str, person: str) -> bytes:
    """A person's display name, sealed under their data key."""
    return f"person-name|{store_id}|{person}".encode()


def log_payload(store_id: str, conversation: str, seq: int) -> bytes:
    """A conversation log entry's text, bound to its row."""
    return f"log|{store_id}|{conversation}|{seq}".encode()


def erasure_probes(store_id: str, mark_id: int) -> bytes:
    """The erased ciphertexts a pending-erasure mark keeps, sealed under its own key."""
    return f"erasure-probes|{store_id}|{mark_id}".encode()


# What a pending-erasure mark's sealed blob starts with (then each erased ciphertext, framed);
# marks written before it hold only the last bytes of each, end to end.
ERASED_CIPHERTEXTS = b"engram-erased-ciphertexts-v2\n"

# ---- domains of digests and derived keys ------------------------------------------------

HIDDEN_NAMES = b"engram-hidden-names"  # the key of `Store.hidden_name`, from the signing seed
LEDGER = b"engram-ledger"  # the signed ledger's row-digest key, from the signing seed
GENESIS = b"engram-genesis"  # the previous hash of a chain's first entry
NOTE_KEY = b"engram-note-key"  # person key + conversation key -> the key of a note (C4)
CHECKPOINT = b"engram-checkpoint"  # a checkpoint line's digest (the store key signs it)
# An access report's digest (control/report_signature): the same key signs it, so its
# domain keeps a report's signature from ever passing for a checkpoint line's.
ACCESS_REPORT = b"engram-access-report"
ANCHOR_PATH = b"engram-anchor-path"  # the name of a checkpoint's anchor, from its path
# A chain's signed head: its keyed name, length and head hash (store/signed_heads.py).
SIGNED_HEAD = b"engram-signed-head"
PAYLOAD = b"payload"  # a chain entry's payload hash, over its sealed text
STORE_INFO = b"store-info"  # the digest of the store's info row (the ledger records it)
