"""Signing an access report with the store's key, and checking one (issue 17 item 14).

The report is one PDF file a person can be handed. Its signature travels inside it, as
PDF comment lines after the document's end (readers skip comments and what follows
`%%EOF`, so the file still opens everywhere):

    %ENGRAM-REPORT-SIGNATURE 1
    %store <store id>
    %digest <BLAKE2b-256 of every byte before this block, hex>
    %signature <Ed25519 over digest("engram-access-report", store id, that digest), hex>
    %%EOF

So the signature covers exactly the bytes the person sees: every byte of the PDF before
the block. Checking needs only the store's public key (no Qt, no display, no passphrase).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

from engram.store import contexts
from engram.store.crypto import Signer, digest, signature_ok

MARKER = b"\n%ENGRAM-REPORT-SIGNATURE 1\n"
_DOMAIN = contexts.ACCESS_REPORT


class Verdict(StrEnum):
    """What checking a report found."""

    VERIFIED = "verified"
    ALTERED = "altered"
    UNSIGNED = "unsigned"
    OTHER_STORE = "other_store"


@dataclass(frozen=True, slots=True)
class ReportCheck:
    """A verdict and the one sentence that says it."""

    verdict: Verdict
    sentence: str

    @property
    def ok(self) -> bool:
        """Whether the file came from this store unaltered."""
        return self.verdict is Verdict.VERIFIED


def content_digest(content: bytes) -> bytes:
    """BLAKE2b-256 of the report's bytes."""
    return hashlib.blake2b(content, digest_size=32).digest()


def _message(store_id: str, content_hash: bytes) -> bytes:
    return digest(_DOMAIN, store_id.encode("utf-8"), content_hash)


def content_hasher() -> hashlib.blake2b:
    """A BLAKE2b-256 fed piece by piece: its digest is `content_digest` of the pieces."""
    return hashlib.blake2b(digest_size=32)


def sign_report(content: bytes, store_id: str, signer: Signer) -> bytes:
    """The report's bytes with the signature block appended."""
    return content + signature_block(content_digest(content), store_id, signer)


def signature_block(hashed: bytes, store_id: str, signer: Signer) -> bytes:
    """The block that signs content whose BLAKE2b-256 is `hashed` (written after it)."""
    signature = signer.sign(_message(store_id, hashed))
    block = (
        MARKER
        + b"%store "
        + store_id.encode("utf-8")
        + b"\n%digest "
        + hashed.hex().encode()
        + b"\n%signature "
        + signature.hex().encode()
        + b"\n%%EOF\n"
    )
    return block


def key_fingerprint(verify_key: bytes) -> str:
    """The store's public key, short enough to read aloud: 8 groups of 4 hex digits."""
    hexed = hashlib.blake2b(verify_key, digest_size=16).hexdigest()
    return " ".join(hexed[i : i + 4] for i in range(0, len(hexed), 4))


def check_report(data: bytes, store_id: str, verify_key: bytes) -> ReportCheck:
    """Whether `data` is a report signed by this store (its id and public key) and
    unaltered since, as a verdict and one sentence."""
    at = data.rfind(MARKER)
    if at < 0:
        return ReportCheck(
            Verdict.UNSIGNED,
            "This file carries no Engram signature, so nothing shows where it came from.",
        )
    content, block = data[:at], data[at + len(MARKER) :]
    fields = _fields(block)
    altered = ReportCheck(
        Verdict.ALTERED,
        "This report was changed after it was signed: it is not what the store wrote.",
    )
    if fields is None:
        return altered
    signer_store, claimed, signature = fields
    if signer_store != store_id:
        return ReportCheck(
            Verdict.OTHER_STORE,
            "This report was signed by another Engram store, not by this one; check it "
            "against the store it came from.",
        )
    hashed = content_digest(content)
    if claimed != hashed or not signature_ok(verify_key, _message(store_id, hashed), signature):
        return altered
    return ReportCheck(
        Verdict.VERIFIED, "This report came from this store and is unaltered since it was signed."
    )


def _fields(block: bytes) -> tuple[str, bytes, bytes] | None:
    """The signer's store id, the claimed digest and the signature; None if malformed."""
    lines = block.split(b"\n")
    if len(lines) != 5 or lines[3] != b"%%EOF" or lines[4] != b"":
        return None
    try:
        store = _value(lines[0], b"%store ").decode("utf-8")
        claimed = bytes.fromhex(_value(lines[1], b"%digest ").decode("ascii"))
        signature = bytes.fromhex(_value(lines[2], b"%signature ").decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        return None
    return store, claimed, signature


def _value(line: bytes, prefix: bytes) -> bytes:
    if not line.startswith(prefix):
        raise ValueError(prefix)
    return line[len(prefix) :]
