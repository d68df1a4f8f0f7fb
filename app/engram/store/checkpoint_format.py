"""The checkpoint file's lines: a signed base, then one signed step per write.

Every line is canonical JSON (sorted keys, no spaces) ending in a newline, with its
Ed25519 signature (hex) beside the fields it signs. A line is read only if it is exactly
the encoding of what it says, so no byte of the file can change without being noticed:

- base: `{"chains": {H: [length, head]}, "gone": [H…], "serial": S, "store": ID, "v": 2}`
- step: `{"base": B, "chains": {…}, "gone": […], "prev": D, "revived": […], "serial": S,
  "store": ID, "v": 2}` — only the chains one write touched; `prev` is the digest of the
  line before it and `base` the length of the base line (so a writer knows when to compact
  without reading it). Empty `gone` and `revived` are left out.

H is the chain id's keyed hash (`Store.hidden_name`), so the file names nobody. Files from
before this format (one JSON object with chain ids in clear, a base64 signature) are read
by `decode_legacy`, and rewritten in this format by the next write.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engram.store import contexts
from engram.store.crypto import Signer, Verifier, canonical_json, digest

FORMAT = 2
_DOMAIN = contexts.CHECKPOINT

Heads = dict[str, tuple[int, bytes]]


class CheckpointDamaged(ValueError):
    """The checkpoint file is not a checkpoint this store signed."""


@dataclass(frozen=True, slots=True)
class Anchor:
    """What one place last saw of a store's checkpoint: its serial and latest line's digest."""

    serial: int
    digest: bytes

    def to_text(self) -> str:
        """As kept in a file or the keyring."""
        return f"{self.serial}:{self.digest.hex()}"

    @staticmethod
    def from_text(text: str) -> Anchor:
        """Parse; ValueError if it is not an anchor."""
        serial, _, hexed = text.strip().partition(":")
        return Anchor(int(serial), bytes.fromhex(hexed))

    @staticmethod
    def of(checkpoint: Checkpoint) -> Anchor:
        """The anchor of a checkpoint."""
        return Anchor(checkpoint.serial, checkpoint.digest)


@dataclass
class Checkpoint:
    """Keyed hash of a chain id -> (length, head); keyed hashes of erased chains; the
    serial number and digest of the latest line (what anchors keep)."""

    store_id: str
    chains: Heads = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)
    serial: int = 0
    digest: bytes = b""
    legacy: bool = False  # read from a file of the old format (chain ids in clear)


@dataclass(frozen=True)
class Step:
    """What one write adds: the heads of the chains it touched, the chains it erased and
    the chains it started (again)."""

    chains: Heads
    gone: frozenset[str] = frozenset()
    revived: frozenset[str] = frozenset()


def merge(checkpoint: Checkpoint, step: Step) -> None:
    """Apply one write: the longest head wins; a chain recorded as erased is never put back,
    unless this very write started it again (a person created again after an erase)."""
    for hidden in step.revived:
        checkpoint.gone.discard(hidden)
    for hidden, (length, head) in step.chains.items():
        if hidden in checkpoint.gone:
            continue  # erased since this write: a late update must not bring it back
        known = checkpoint.chains.get(hidden)
        if known is None or known[0] <= length or hidden in step.revived:
            checkpoint.chains[hidden] = (length, head)
    for hidden in step.gone:
        checkpoint.chains.pop(hidden, None)
        checkpoint.gone.add(hidden)


@dataclass(frozen=True)
class Line:
    """One decoded line: what it carries, its serial, digest and (for steps) links."""

    serial: int
    digest: bytes
    step: Step
    prev: bytes | None = None  # None: a base
    base_size: int = 0


def _chains_json(chains: Mapping[str, tuple[int, bytes]]) -> dict[str, list[Any]]:
    return {k: [n, h.hex()] for k, (n, h) in sorted(chains.items())}


def _sign(body: dict[str, Any], signer: Signer) -> tuple[bytes, bytes]:
    signed = canonical_json(body).encode()
    line = canonical_json({**body, "signature": signer.sign(signed).hex()}).encode() + b"\n"
    return line, digest(_DOMAIN, signed)


def encode_base(checkpoint: Checkpoint, signer: Signer) -> tuple[bytes, bytes]:
    """The base line of `checkpoint` and its digest."""
    return _sign(
        _base_body(
            checkpoint.store_id,
            checkpoint.serial,
            Step(checkpoint.chains, frozenset(checkpoint.gone)),
        ),
        signer,
    )


def encode_step(
    store_id: str, serial: int, prev: bytes, base_size: int, step: Step, signer: Signer
) -> tuple[bytes, bytes]:
    """A step line following the line whose digest is `prev`, and its digest."""
    return _sign(_step_body(store_id, serial, prev, base_size, step), signer)


def _base_body(store_id: str, serial: int, step: Step) -> dict[str, Any]:
    return {
        "v": FORMAT,
        "store": store_id,
        "serial": serial,
        "chains": _chains_json(step.chains),
        "gone": sorted(step.gone),
    }


def _step_body(
    store_id: str, serial: int, prev: bytes, base_size: int, step: Step
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "v": FORMAT,
        "store": store_id,
        "serial": serial,
        "prev": prev.hex(),
        "base": base_size,
        "chains": _chains_json(step.chains),
    }
    if step.gone:
        body["gone"] = sorted(step.gone)
    if step.revived:
        body["revived"] = sorted(step.revived)
    return body


def is_legacy(first_line: bytes) -> bool:
    """Whether a file's first line is a checkpoint of the old format."""
    try:
        data = json.loads(first_line)
    except ValueError:
        return False
    return isinstance(data, dict) and "v" not in data and "signature" in data


def decode_line(raw: bytes, store_id: str, verifier: Verifier, *, base: bool) -> Line:
    """One line (without its newline), checked: exactly the encoding of what it says, of
    this store, signed by it. CheckpointDamaged otherwise."""
    try:
        data = json.loads(raw)
        signature = bytes.fromhex(data.pop("signature"))
        if data.get("v") != FORMAT:
            raise CheckpointDamaged("it is not in a format this Engram reads")
        if data["store"] != store_id:
            raise CheckpointDamaged("the checkpoint belongs to another store")
        step = Step(
            chains={str(k): (int(n), bytes.fromhex(h)) for k, (n, h) in data["chains"].items()},
            gone=frozenset(str(h) for h in data.get("gone", [])),
            revived=frozenset(str(h) for h in data.get("revived", [])),
        )
        serial = int(data["serial"])
        if base:
            body = _base_body(store_id, serial, step)
            prev, base_size = None, 0
        else:
            prev, base_size = bytes.fromhex(data["prev"]), int(data["base"])
            body = _step_body(store_id, serial, prev, base_size, step)
    except CheckpointDamaged:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise CheckpointDamaged(f"a line of it cannot be read ({type(error).__name__})") from None
    signed = canonical_json(body).encode()
    if canonical_json({**body, "signature": signature.hex()}).encode() != raw:
        raise CheckpointDamaged("a line of it was changed")
    if not verifier.ok(signed, signature):
        raise CheckpointDamaged("the checkpoint's signature does not match")
    return Line(serial, digest(_DOMAIN, signed), step, prev, base_size)


def decode_legacy(
    raw: bytes, store_id: str, verifier: Verifier, hide: Callable[[str], str]
) -> Checkpoint:
    """A checkpoint of the old format (one object, chain ids in clear), its chains keyed
    by hash from here on; its digest is the one anchors kept of it."""
    try:
        data = json.loads(raw)
        chains = {str(k): (int(n), bytes.fromhex(h)) for k, (n, h) in data["chains"].items()}
        gone = {str(h) for h in data.get("gone", [])}
        serial = int(data.get("serial", 0))
        signature = base64.b64decode(data["signature"])
        found = str(data["store"])
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise CheckpointDamaged(f"it cannot be read ({type(error).__name__})") from None
    if found != store_id:
        raise CheckpointDamaged("the checkpoint belongs to another store")
    body: dict[str, object] = {
        "store": found,
        "chains": {k: [n, h.hex()] for k, (n, h) in sorted(chains.items())},
        "gone": sorted(gone),
    }
    if serial:
        body["serial"] = serial
    signed = canonical_json(body).encode()
    if not verifier.ok(signed, signature):
        raise CheckpointDamaged("the checkpoint's signature does not match")
    return Checkpoint(
        store_id,
        {hide(k): v for k, v in chains.items()},
        gone,
        serial,
        digest(_DOMAIN, signed),
        legacy=True,
    )
