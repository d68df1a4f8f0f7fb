"""The store's one row of clear metadata (`store_info`), and unlocking the store with it.

The row holds the store key (KEK) sealed under a key derived from the passphrase (when the
store has one), the signing seed sealed under the KEK, the verify key, and a checksum that
tells a damaged row from a wrong key. `unlock` finds the KEK, from the passphrase or the
OS keyring, and says in one sentence why it cannot.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from sqlalchemy import Engine, exc, inspect, select

from engram.model.clock import Clock, to_micros
from engram.model.errors import (
    CorruptStore,
    InvalidInput,
    KeyUnavailable,
    NotAStore,
    PassphraseNeeded,
    WrongPassphrase,
)
from engram.store import contexts, crypto, schema
from engram.store.crypto import KdfParams, KdfRefused, SealBroken, Signer
from engram.store.dialect import sqlite_path
from engram.store.keyring_access import KeyringAccess, KeyringFailed
from engram.store.location import describe
from engram.store.storage_faults import from_database

PASSPHRASE_HINT = (
    "give the passphrase with --passphrase-env VAR, --passphrase-file FILE or "
    "--passphrase-fd N, or run the command on a terminal to be asked for it"
)


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """The store's one row of clear metadata."""

    id: str
    format_version: int
    created_at: int
    kdf: KdfParams | None
    salt: bytes | None
    kek_by_passphrase: bytes | None
    keyring_backend: str | None
    sealed_signing_seed: bytes
    verify_key: bytes

    def checksum(self) -> bytes:
        """Detects a damaged info row before any key is tried (so damage != wrong key)."""
        fields = [
            self.id,
            self.format_version,
            self.created_at,
            self.kdf.to_json() if self.kdf else None,
            (self.salt or b"").hex(),
            (self.kek_by_passphrase or b"").hex(),
            self.keyring_backend,
            self.sealed_signing_seed.hex(),
            self.verify_key.hex(),
        ]
        return crypto.digest(contexts.STORE_INFO, crypto.canonical_json(fields).encode())

    def signing_seed(self, kek: bytes) -> bytes:
        """The signing seed, unsealed with the store key (SealBroken if it does not open)."""
        return crypto.unseal(kek, self.sealed_signing_seed, contexts.signing_seed(self.id))


def new_info(
    store_id: str,
    kek: bytes,
    signer: Signer,
    clock: Clock,
    *,
    passphrase: str | None,
    kdf: KdfParams,
    keyring_backend: str | None,
) -> StoreInfo:
    """A new store's info: the signing seed sealed under the store key, and the store key
    sealed under the passphrase when there is one; created now, after the key derivation."""
    salt = crypto.random_salt() if passphrase is not None else None
    wrapped = None
    if passphrase is not None and salt is not None:
        try:
            wrapping = crypto.passphrase_key(passphrase, salt, kdf)
        except KdfRefused as refused:
            raise InvalidInput(
                f"Cannot protect the new store with these key-derivation limits: {refused}; "
                "nothing was created."
            ) from None
        wrapped = crypto.seal(wrapping, kek, contexts.kek_by_passphrase(store_id))
    return StoreInfo(
        id=store_id,
        format_version=schema.FORMAT_VERSION,
        created_at=to_micros(clock.now()),
        kdf=kdf if passphrase is not None else None,
        salt=salt,
        kek_by_passphrase=wrapped,
        keyring_backend=keyring_backend,
        sealed_signing_seed=crypto.seal(kek, signer.seed, contexts.signing_seed(store_id)),
        verify_key=signer.verify_key,
    )


def rewrapped(info: StoreInfo, kek: bytes, passphrase: str, kdf: KdfParams) -> StoreInfo:
    """The same store's info with its key sealed under `passphrase` instead (a fresh salt;
    the key, the signing seed and everything sealed under the key stay as they were)."""
    salt = crypto.random_salt()
    try:
        wrapping = crypto.passphrase_key(passphrase, salt, kdf)
    except KdfRefused as refused:
        raise InvalidInput(
            f"Cannot protect the store with these key-derivation limits: {refused}; nothing "
            "was changed."
        ) from None
    sealed = crypto.seal(wrapping, kek, contexts.kek_by_passphrase(info.id))
    return replace(info, kdf=kdf, salt=salt, kek_by_passphrase=sealed)


def info_row(info: StoreInfo) -> dict[str, object]:
    """The info as its `store_info` row, checksum included."""
    return {
        "id": info.id,
        "format_version": info.format_version,
        "created_at": info.created_at,
        "kdf": json.dumps(info.kdf.to_json()) if info.kdf else None,
        "salt": info.salt,
        "kek_by_passphrase": info.kek_by_passphrase,
        "keyring_backend": info.keyring_backend,
        "sealed_signing_seed": info.sealed_signing_seed,
        "verify_key": info.verify_key,
        "checksum": info.checksum(),
    }


def read_info(engine: Engine, url: str) -> StoreInfo:
    """The store's info row, checked (CorruptStore if missing or changed, NotAStore)."""
    damaged = (
        f"The store at {describe(url)} is damaged: its store info row is missing or was "
        "changed; restore it from a backup."
    )
    try:
        if sqlite_path(url) is None and not inspect(engine).has_table("store_info"):
            raise NotAStore(
                f"The database at {describe(url)} is not an Engram store (it has no store_info "
                "table); it was left unchanged."
            )
        with engine.connect() as connection:
            rows = connection.execute(select(schema.store_info)).mappings().all()
    except exc.DBAPIError as error:
        fault = from_database(error, url, "open")
        if fault is not None and not isinstance(fault, CorruptStore):
            raise fault from None  # a full disk or a server that is down is not damage
        raise CorruptStore(damaged) from None
    if len(rows) != 1:
        raise CorruptStore(damaged)
    row = rows[0]
    try:
        info = StoreInfo(
            id=row["id"],
            format_version=int(row["format_version"]),
            created_at=int(row["created_at"]),
            kdf=KdfParams.from_json(json.loads(row["kdf"])) if row["kdf"] else None,
            salt=row["salt"],
            kek_by_passphrase=row["kek_by_passphrase"],
            keyring_backend=row["keyring_backend"],
            sealed_signing_seed=row["sealed_signing_seed"],
            verify_key=row["verify_key"],
        )
    except (ValueError, TypeError, KeyError):
        raise CorruptStore(damaged) from None
    if info.checksum() != row["checksum"]:
        raise CorruptStore(damaged)
    if info.format_version > schema.FORMAT_VERSION:
        raise CorruptStore(
            f"The store at {describe(url)} was made by a newer Engram (format "
            f"{info.format_version}); upgrade Engram to open it."
        )
    return info


def _needs_passphrase(what_happened: str) -> KeyUnavailable:
    """The store opens with its passphrase instead; the CLI says how to give it."""
    return PassphraseNeeded(
        f"{what_happened}; open it with its passphrase.",
        cli_message=f"{what_happened}; {PASSPHRASE_HINT}.",
    )


def _wrapping_key(passphrase: str, salt: bytes, kdf: KdfParams) -> bytes:
    """The passphrase's key, derived only within the bounds crypto.kdf_problem sets: the
    limits come from the store file, which anyone may have written (issue 15, item 8)."""
    problem = crypto.kdf_problem(kdf)
    if problem is not None:
        raise CorruptStore(
            f"This store asks for a passphrase key derivation of {problem}, so it was not "
            "opened and nothing was derived or changed; its record of those limits was "
            "changed outside Engram."
        )
    try:
        return crypto.passphrase_key(passphrase, salt, kdf)
    except KdfRefused as failed:
        raise KeyUnavailable(
            f"Deriving the store's key from the passphrase failed ({failed}); nothing was "
            "changed — free some memory and try again."
        ) from None


def _keyring_failed(failed: KeyringFailed, has_passphrase: bool) -> KeyUnavailable:
    """The keyring's failure for this store: never advise a passphrase it does not have."""
    if has_passphrase:
        mend = f"{failed.fix}, or " if failed.fix else ""
        return PassphraseNeeded(str(failed), cli_message=f"{failed.what}; {mend}{PASSPHRASE_HINT}.")
    fix = f"{failed.fix} and try again" if failed.fix else "try again once it works"
    return KeyUnavailable(
        f"{failed.what}; {fix} — this store has no passphrase, so only the OS keyring opens it."
    )


def unlock(info: StoreInfo, passphrase: str | None, access: KeyringAccess) -> bytes:
    """The store key (KEK), from the passphrase or else the OS keyring."""
    if passphrase is not None:
        if info.kek_by_passphrase is None or info.salt is None or info.kdf is None:
            raise KeyUnavailable(
                "This store has no passphrase; it opens with the OS keyring of the computer "
                "it was created on."
            )
        wrapping = _wrapping_key(passphrase, info.salt, info.kdf)
        try:
            return crypto.unseal(
                wrapping, info.kek_by_passphrase, contexts.kek_by_passphrase(info.id)
            )
        except SealBroken:
            raise WrongPassphrase(
                "The passphrase does not open this store; nothing was changed, try again."
            ) from None
    has_passphrase = info.kek_by_passphrase is not None
    try:
        backend = access.usable_backend()  # finding the backend can hang too: with a timeout
        if backend is None:
            said = (access.unusable or "").strip().splitlines()
            why = f" ({said[0].rstrip('.')})" if said else ""
            if has_passphrase:
                raise _needs_passphrase(
                    f"There is no usable OS keyring on this computer{why}, so the store's key "
                    "cannot be fetched from it"
                )
            raise KeyUnavailable(
                f"There is no usable OS keyring on this computer{why} and this store has no "
                "passphrase; open it on the computer where it was created."
            )
        kek = access.get(info.id)
    except KeyringFailed as failed:
        raise _keyring_failed(failed, has_passphrase) from None
    if kek is None:
        if info.keyring_backend and backend != info.keyring_backend:
            changed = (
                f"The OS keyring changed since this store was created (it was "
                f"{info.keyring_backend}, now {backend}) and holds no key for it, so nothing "
                "was opened and no new store was created"
            )
            if has_passphrase:
                raise _needs_passphrase(changed)
            raise KeyUnavailable(f"{changed}; open it where it was created.")
        if has_passphrase:
            raise _needs_passphrase("The OS keyring holds no key for this store")
        raise KeyUnavailable(
            "The OS keyring holds no key for this store; open it where it was created."
        )
    try:
        info.signing_seed(kek)
    except SealBroken:
        wrong = "The key the OS keyring holds for this store does not open it"
        if has_passphrase:
            raise _needs_passphrase(wrong) from None
        raise KeyUnavailable(
            f"{wrong}, and the store has no passphrase; nothing was changed — the keyring's "
            "entry for it was changed, or belongs to another store with its id."
        ) from None
    return kek
