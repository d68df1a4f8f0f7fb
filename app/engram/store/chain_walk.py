"""Walk one chain as its entries stream past, against its signed head (signed_heads.py).

Fed one entry at a time (`step`), it holds only the hash to link to and the few hashes
asked for (the signed length, the checkpoint's length), so a chain of any length walks
in flat memory. It checks:

- every hash link: an entry's seq follows the one before, its `prev_hash` is that entry's
  hash, and its own hash is that of its contents (a forged entry anywhere breaks one);
- an entry's own signature, where it has one (entries written before signed heads);
- the chain's signed head (`finish`): present when the chain holds entries, signed by the
  store key, its hash equal to the walked hash at its length, and no entries missing
  before that length nor any past it (an unsigned tail).

Each finding is one sentence naming the chain; the walk stops at the first.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from engram.store import chain, signed_heads
from engram.store.crypto import Verifier
from engram.store.signed_heads import SignedHead


class ChainWalk:
    """The walk of one chain (see the module's docstring)."""

    def __init__(
        self,
        store_id: str,
        chain_id: str,
        verifier: Verifier,
        signed: SignedHead | None,
        keep: Collection[int] = (),
    ) -> None:
        self.store_id = store_id
        self.chain_id = chain_id
        self.verifier = verifier
        self.signed = signed
        self.prev = chain.genesis(store_id, chain_id)
        self.length = 0
        # The entry hashes asked for (the checkpoint's length, the signed length), by seq.
        self.keep = {*keep, *((signed.length,) if signed is not None else ())}
        self.hashes: dict[int, bytes] = {}

    def step(
        self,
        seq: int,
        prev: bytes,
        entry: bytes,
        signature: bytes,
        header: bytes,
        payload_hash: bytes | None,
        legacy: Callable[[], bytes] | None = None,
    ) -> str | None:
        """Check the next entry (its `header` rebuilt from its clear columns, or the
        `legacy` one, tried only when that does not match); a finding, or None."""
        expected = self.length + 1
        if seq != expected:
            return f"{self.chain_id}: entry {expected} is missing (next is {seq})"
        if prev != self.prev:
            return f"{self.chain_id}: entry {seq}: does not link to the entry before it"
        if chain.entry_hash(prev, header, payload_hash) != entry and (
            legacy is None or chain.entry_hash(prev, legacy(), payload_hash) != entry
        ):
            return f"{self.chain_id}: entry {seq}: its contents do not match its hash"
        if signature and not self.verifier.ok(entry, signature):  # written before signed heads
            return f"{self.chain_id}: entry {seq}: its signature does not match"
        if seq in self.keep:
            self.hashes[seq] = entry
        self.prev = entry
        self.length = seq
        return None

    def finish(self) -> str | None:
        """Check the walked chain against its signed head; a finding, or None. Then
        `hashes` holds the hash at the chain's length too."""
        if self.length:
            self.hashes[self.length] = self.prev
        signed = self.signed
        if signed is None:
            if self.length:
                return (
                    f"{self.chain_id}: its signed head is missing, so its {self.length} "
                    "entries are vouched for by no signature (deleted outside Engram)"
                )
            return None
        if not signed_heads.holds(self.verifier, self.store_id, signed):
            return (
                f"{self.chain_id}: its signed head does not carry this store's signature "
                "(changed outside Engram, or signed by another key)"
            )
        if self.length < signed.length:
            return (
                f"{self.chain_id}: the store holds {self.length} entries but its signed head "
                f"covers {signed.length}; entries were removed outside Engram"
            )
        if self.hashes.get(signed.length) != signed.head:
            return (
                f"{self.chain_id}: entry {signed.length} differs from its signed head "
                "(the chain was rewritten outside Engram)"
            )
        if self.length > signed.length:
            tail = self.length - signed.length
            entries = "entry" if tail == 1 else f"{tail} entries"
            return (
                f"{self.chain_id}: {entries} after entry {signed.length} "
                f"{'is' if tail == 1 else 'are'} not covered by its signed head (added "
                "outside Engram)"
            )
        return None
