"""Crypto primitives, each used one way only (DESIGN.md, "Crypto details that matter").

- seal/unseal: XChaCha20-Poly1305 (nacl.secret.Aead), random nonce chosen by PyNaCl,
  associated data = the row's identity, so ciphertexts cannot move between rows.
- passphrase keys: Argon2id with explicit limits recorded in the store.
- note keys: keyed BLAKE2b over the conversation key under the person key, so destroying
  either key makes the text unreadable (C4).
- chain hashing: BLAKE2b-256; signatures: Ed25519.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import nacl.exceptions
import nacl.pwhash
import nacl.secret
import nacl.signing
import nacl.utils

from engram.model.errors import InvalidInput
from engram.store import contexts

KEY_BYTES = 32
SALT_BYTES = nacl.pwhash.argon2id.SALTBYTES


class SealBroken(Exception):
    """A sealed value did not open: wrong key, wrong row, or changed bytes."""


def random_key() -> bytes:
    """A fresh random 32-byte key (store key or data key; never derived)."""
    return nacl.utils.random(KEY_BYTES)


def random_salt() -> bytes:
    """A fresh salt for Argon2id."""
    return nacl.utils.random(SALT_BYTES)


def seal(key: bytes, plaintext: bytes, aad: bytes) -> bytes:
    """Encrypt and authenticate; the nonce is random and travels in the result."""
    return bytes(nacl.secret.Aead(key).encrypt(plaintext, aad))


def unseal(key: bytes, sealed: bytes, aad: bytes) -> bytes:
    """Decrypt and check; SealBroken if the key, the row identity or a byte is wrong."""
    try:
        return bytes(nacl.secret.Aead(key).decrypt(sealed, aad))
    except (nacl.exceptions.CryptoError, ValueError, TypeError) as error:
        raise SealBroken(str(error)) from None


@dataclass(frozen=True, slots=True)
class KdfParams:
    """Argon2id limits, recorded in the store so any machine derives the same key."""

    opslimit: int
    memlimit: int

    def to_json(self) -> dict[str, Any]:
        """As recorded in the store."""
        return {"alg": "argon2id13", "opslimit": self.opslimit, "memlimit": self.memlimit}

    @staticmethod
    def from_json(data: dict[str, Any]) -> KdfParams:
        """Read recorded limits."""
        if data.get("alg") != "argon2id13":
            raise ValueError(f"unknown key derivation {data.get('alg')!r}")
        return KdfParams(int(data["opslimit"]), int(data["memlimit"]))


# About half a second on a current laptop (measured: tests/perf/bench_kdf.py); PyNaCl's own
# "sensitive" default would take 1 GiB of memory.
CALIBRATED_KDF = KdfParams(opslimit=3, memlimit=256 * 1024 * 1024)
DEFAULT_KDF = CALIBRATED_KDF
# Only for tests and benchmarks that create many throwaway stores.
FAST_KDF_FOR_TESTS = KdfParams(opslimit=1, memlimit=8 * 1024 * 1024)


# The limits a store may ask for. A store's info row is checked by an unkeyed checksum, so
# whoever hands over a store chooses them: 64 GiB would exhaust the opener's memory, 2^32-1
# passes would hang it. `engram init` records CALIBRATED_KDF (3 passes over 256 MiB) and
# tests FAST_KDF_FOR_TESTS; the bounds allow up to PyNaCl's SENSITIVE preset (4 passes over
# 1 GiB, a few seconds), and no more work than that in all.
MIN_OPSLIMIT = nacl.pwhash.argon2id.OPSLIMIT_MIN  # 1
MAX_OPSLIMIT = 10
MIN_MEMLIMIT = nacl.pwhash.argon2id.MEMLIMIT_MIN  # 8 KiB
MAX_MEMLIMIT = 1 << 30  # 1 GiB
MAX_KDF_WORK = 4 << 30  # passes × bytes: SENSITIVE's 4 × 1 GiB


class KdfRefused(Exception):
    """Argon2id limits outside the bounds above, or a derivation that failed; the message
    is a clause saying which."""


def kdf_problem(params: KdfParams) -> str | None:
    """Why these limits are refused (a clause), or None when they are within the bounds."""
    ops, mem = params.opslimit, params.memlimit
    asked = f"{ops} passes over {mem / (1 << 20):g} MiB"
    if not MIN_OPSLIMIT <= ops <= MAX_OPSLIMIT:
        return f"{asked}, but Engram takes {MIN_OPSLIMIT} to {MAX_OPSLIMIT} passes"
    if not MIN_MEMLIMIT <= mem <= MAX_MEMLIMIT:
        return f"{asked}, but Engram takes {MIN_MEMLIMIT >> 10} KiB to {MAX_MEMLIMIT >> 20} MiB"
    if ops * mem > MAX_KDF_WORK:
        return f"{asked}, more work than Engram takes ({MAX_KDF_WORK >> 30} GiB-passes in all)"
    return None


def passphrase_key(passphrase: str, salt: bytes, params: KdfParams) -> bytes:
    """Derive the key that wraps the store key from a passphrase. KdfRefused, before any
    work, for limits outside the bounds; KdfRefused too when the derivation fails (no
    memory for it)."""
    problem = kdf_problem(params)
    if problem is not None:
        raise KdfRefused(problem)
    try:
        return bytes(
            nacl.pwhash.argon2id.kdf(
                KEY_BYTES,
                passphrase.encode("utf-8"),
                salt,
                opslimit=params.opslimit,
                memlimit=params.memlimit,
            )
        )
    except MemoryError:
        raise KdfRefused(f"there was not enough memory for {params.memlimit >> 20} MiB") from None
    except (nacl.exceptions.CryptoError, ValueError, TypeError) as error:
        raise KdfRefused(str(error) or type(error).__name__) from None


# BLAKE2b comes from hashlib: the same function as libsodium's (byte for byte, tested),
# without PyNaCl's per-call wrapping, which cost a tenth of every append.


def note_key(person_key: bytes, conversation_key: bytes) -> bytes:
    """The key for note text learned in a conversation: needs both keys (C4)."""
    return hashlib.blake2b(
        conversation_key, digest_size=KEY_BYTES, key=person_key, person=contexts.NOTE_KEY
    ).digest()


def digest(*parts: bytes) -> bytes:
    """BLAKE2b-256 over the length-prefixed parts (unambiguous concatenation)."""
    framed = b"".join([len(part).to_bytes(8, "big") + part for part in parts])
    return hashlib.blake2b(framed, digest_size=32).digest()


def keyed_digest(key: bytes, data: bytes) -> bytes:
    """BLAKE2b-256 keyed: a name that reveals nothing without the key."""
    return hashlib.blake2b(data, digest_size=32, key=key).digest()


def utf8(text: str) -> bytes:
    """Text as the bytes that get sealed or hashed; a string that is not valid Unicode (a
    lone surrogate, say) is refused with one sentence before anything is written."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(
            "The text holds characters that are not valid Unicode; nothing was written."
        ) from None


# One encoder for every call: json.dumps with options builds a new one each time.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the bytes that get hashed and signed."""
    return _CANONICAL.encode(value)


class Signer:
    """The store's Ed25519 signing key (its seed is kept sealed under the store key)."""

    def __init__(self, seed: bytes) -> None:
        self._key = nacl.signing.SigningKey(seed)

    @staticmethod
    def generate() -> Signer:
        """A new random signing key."""
        return Signer(random_key())

    @property
    def seed(self) -> bytes:
        """The 32-byte seed, for sealing into the store."""
        return bytes(self._key)

    @property
    def verify_key(self) -> bytes:
        """The public half, kept in clear."""
        return bytes(self._key.verify_key)

    def sign(self, message: bytes) -> bytes:
        """A 64-byte detached signature."""
        return bytes(self._key.sign(message).signature)


class Verifier:
    """Checks the store's signatures (one parsed public key for many checks)."""

    def __init__(self, verify_key: bytes) -> None:
        self._key = nacl.signing.VerifyKey(verify_key)

    def ok(self, message: bytes, signature: bytes) -> bool:
        """Whether `signature` is the store's signature of `message`."""
        try:
            self._key.verify(message, signature)
        except (nacl.exceptions.BadSignatureError, ValueError, TypeError):
            return False
        return True


def signature_ok(verify_key: bytes, message: bytes, signature: bytes) -> bool:
    """Whether `signature` is the store's signature of `message` (a one-off check)."""
    return Verifier(verify_key).ok(message, signature)
