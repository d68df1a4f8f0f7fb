"""Opening, creating and holding a store: keys, signing, transactions, checkpoint."""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NoReturn

from alembic.util import CommandError
from sqlalchemy import Connection, Engine, Table, delete, exc, insert, inspect, select

from engram.model.clock import Clock, SystemClock, to_micros
from engram.model.errors import (
    CorruptStore,
    KeyUnavailable,
    NotAStore,
    ReadOnlyStore,
    StoreExists,
    StoreMissing,
    WrongPassphrase,
)
from engram.store import crypto, faults, file_check, ledger, migrate, schema
from engram.store.checkpoint import Checkpoint, CheckpointFile
from engram.store.checkpoint_anchor import Anchors
from engram.store.crypto import KdfParams, SealBroken, Signer
from engram.store.dialect import failure_kind, make_engine, sqlite_path
from engram.store.keyring_access import KeyringAccess
from engram.store.location import checkpoint_path, describe, store_url
from engram.store.release import ReleaseRequests, end_old_reads

PASSPHRASE_HINT = "give the passphrase with --passphrase-env VAR"


class KeyGone(Exception):
    """A data key was destroyed (erasure or conversation deletion): its text is unreadable."""


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
        return crypto.digest(b"store-info", crypto.canonical_json(fields).encode())


@dataclass
class WriteTxn:
    """One write transaction; chain heads it moved are checkpointed after commit."""

    conn: Connection
    heads: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    gone: dict[str, str] = field(default_factory=dict)
    revived: dict[str, str] = field(default_factory=dict)
    erased: bool = False
    # Ciphertext this write deleted: a pending-erasure mark keeps its last bytes (sealed)
    # until the files are proven free of them (pending_erasure.py).
    needles: list[bytes] = field(default_factory=list)


def _kek_aad(store_id: str) -> bytes:
    return f"engram-kek|{store_id}".encode()


def _signing_aad(store_id: str) -> bytes:
    return f"engram-signing|{store_id}".encode()


class Store:
    """An open, unlocked store. Everything that reads or writes goes through one of these."""

    def __init__(
        self,
        url: str,
        engine: Engine,
        info: StoreInfo,
        kek: bytes,
        clock: Clock,
        keyring: KeyringAccess,
    ) -> None:
        self.url = url
        self.engine = engine
        self.info = info
        self.clock = clock
        self.keyring = keyring
        self._kek = kek
        try:
            seed = crypto.unseal(kek, info.sealed_signing_seed, _signing_aad(info.id))
        except SealBroken:
            raise CorruptStore(
                f"The store at {describe(url)} is damaged: its signing key does not open."
            ) from None
        self.signer = Signer(seed)
        if self.signer.verify_key != info.verify_key:
            raise CorruptStore(f"The store at {describe(url)} is damaged: its keys disagree.")
        self._keys: dict[str, bytes] = {}
        # Keys created by the open write transaction: cached only once it commits, so a
        # rolled-back key never outlives the row that was never written.
        self._local = threading.local()
        self._hidden_key = crypto.digest(b"engram-hidden-names", self.signer.seed)
        self.pseudonyms: dict[str, str] = {}  # name -> pseudonym (pseudonyms.py), per store
        self.checkpoint = CheckpointFile(
            checkpoint_path(url, info.id), info.id, info.verify_key, self.hidden_name
        )
        self.anchors = Anchors(self.checkpoint.path, info.id, keyring)
        self._last_micros = 0
        # Plaintext-derived data the layers above keep for speed (decrypted logs, search
        # indexes). It lives only while this store is open: close() and every erasure this
        # store commits clear it. An erasure committed by another process reaches a held
        # copy when it is next read (an excision entry, or the conversation gone).
        self.plaintext_caches: dict[str, Any] = {}
        # Another Engram process finishing an erasure asks this one to let go (release.py).
        self.releases = ReleaseRequests(sqlite_path(url))
        self.release_callbacks: list[Callable[[], None]] = []
        end_old_reads(engine, self.releases, self._let_go)

    # ---- creating and opening -------------------------------------------------------

    @classmethod
    def create(
        cls,
        location: str | None,
        *,
        passphrase: str | None = None,
        use_keyring: bool = True,
        kdf: KdfParams | None = None,
        clock: Clock | None = None,
        keyring: KeyringAccess | None = None,
        create_folders: bool = True,
    ) -> Store:
        """Create a new store; its key goes to the OS keyring and/or behind a passphrase.
        Without `create_folders`, a missing folder is refused (the window asks first)."""
        url = store_url(location)
        access = keyring or KeyringAccess()
        backend = access.backend_name() if use_keyring else None
        if passphrase is None and backend is None:
            reason = (
                "there is no usable OS keyring on this computer"
                if use_keyring
                else "the keyring was turned off"
            )
            start = (
                f"Cannot create a store: {reason} and no passphrase was given, so its key "
                "would have nowhere safe to live"
            )
            raise KeyUnavailable(
                f"{start}; choose a passphrase.", cli_message=f"{start}; {PASSPHRASE_HINT}."
            )
        if passphrase is not None and not passphrase:
            raise KeyUnavailable("The passphrase is empty; choose one with some characters.")
        path = sqlite_path(url)
        if path is not None:
            if file_check.holds_store(path):
                raise StoreExists(f"A store already exists at {path}; open it instead.")
            if path.exists() or path.is_symlink():
                raise NotAStore(
                    f"There is already a file at {path}, and it is not an Engram store; it was "
                    "left unchanged — choose another place, or remove it first."
                )
            if not create_folders and not path.parent.is_dir():
                raise StoreMissing(
                    f"The folder {path.parent} does not exist; choose another place or "
                    "create the folder first."
                )
            with contextlib.suppress(PermissionError):  # the sentence below names the folder
                path.parent.mkdir(parents=True, exist_ok=True)
            file_check.check_folder_writable(path, "create")
        engine = make_engine(url)
        if path is None and inspect(engine).has_table("store_info"):
            raise StoreExists(f"A store already exists at {describe(url)}; open it instead.")

        clock = clock or SystemClock()
        kdf = kdf or crypto.DEFAULT_KDF
        kek = crypto.random_key()
        store_id = "s_" + secrets.token_hex(8)
        signer = Signer.generate()
        salt = crypto.random_salt() if passphrase is not None else None
        wrapped = None
        if passphrase is not None and salt is not None:
            wrapping = crypto.passphrase_key(passphrase, salt, kdf)
            wrapped = crypto.seal(wrapping, kek, _kek_aad(store_id))
        info = StoreInfo(
            id=store_id,
            format_version=schema.FORMAT_VERSION,
            created_at=to_micros(clock.now()),
            kdf=kdf if passphrase is not None else None,
            salt=salt,
            kek_by_passphrase=wrapped,
            keyring_backend=backend,
            sealed_signing_seed=crypto.seal(kek, signer.seed, _signing_aad(store_id)),
            verify_key=signer.verify_key,
        )
        with engine.connect() as connection:
            connection = connection.execution_options(write=True)
            with connection.begin():
                migrate.upgrade(connection)
                connection.execute(insert(schema.store_info).values(**_info_row(info)))
                head = ledger.append(connection, store_id, signer, None, info.created_at)
        if backend is not None:
            access.set(store_id, kek)
        store = cls(url, engine, info, kek, clock, access)
        store.anchors.use_keyring = backend is not None
        store.start_checkpoint({ledger.CHAIN: head}, set())
        return store

    @classmethod
    def open(
        cls,
        location: str | None,
        *,
        passphrase: str | None = None,
        clock: Clock | None = None,
        keyring: KeyringAccess | None = None,
    ) -> Store:
        """Open and unlock an existing store. Writes nothing until unlocked."""
        url = store_url(location)
        path = sqlite_path(url)
        if path is not None:
            file_check.check_before_open(path)  # before anything can write to the file
        engine = make_engine(url)
        try:
            info = _read_info(engine, url)
            access = keyring or KeyringAccess()
            kek = _unlock(info, passphrase, access)
            store = cls(url, engine, info, kek, clock or SystemClock(), access)
            store.anchors.use_keyring = passphrase is None  # the key came from the keyring
            store._bring_up_to_date()
        except BaseException:
            # Close every connection so SQLite leaves the files exactly as they were.
            engine.dispose()
            raise
        from engram.store.pending_erasure import finish_on_open

        finish_on_open(store)
        return store

    def _bring_up_to_date(self) -> None:
        """Refuse a missing or unknown schema revision; upgrade an older one."""
        where = describe(self.url)
        try:
            with self.engine.connect() as connection:
                current = migrate.current_revision(connection)
        except (exc.DBAPIError, CommandError):
            raise CorruptStore(
                f"The store at {where} is damaged: the record of its schema version "
                "(alembic_version) cannot be read; restore it from a backup."
            ) from None
        if current == migrate.head_revision():
            return
        if current is None:
            raise CorruptStore(
                f"The store at {where} is damaged: the record of its schema version "
                "(alembic_version) is missing; restore it from a backup."
            )
        if current not in migrate.known_revisions():
            raise CorruptStore(
                f"The store at {where} records a schema version ({current}) this Engram does "
                "not know: it was made by a newer Engram, or that record was changed; upgrade "
                "Engram, or restore the store from a backup."
            )
        heads: dict[str, tuple[int, bytes]] = {}

        def record_every_row(connection: Connection) -> None:
            heads[ledger.CHAIN] = ledger.append(
                connection, self.info.id, self.signer, None, self.now_micros()
            )

        try:
            with self.engine.connect() as connection:
                connection = connection.execution_options(write=True)
                with connection.begin():
                    migrate.upgrade(connection, record_every_row)
        except (exc.DBAPIError, CommandError) as error:
            raised = self._failure(error) if isinstance(error, exc.DBAPIError) else None
            if isinstance(raised, ReadOnlyStore):
                raise raised from None
            raise CorruptStore(
                f"The store at {where} says it has schema version {current}, but upgrading it "
                "from there failed, so that record or its tables were changed; nothing was "
                "changed — restore it from a backup."
            ) from None
        if heads:
            self.checkpoint.update(self.signer, heads, {})

    def close(self) -> None:
        """Drop decrypted keys and release the database."""
        self._keys.clear()
        self.plaintext_caches.clear()
        self.pseudonyms.clear()
        self._kek = b""
        self.engine.dispose()

    def remember_key(self) -> None:
        """Put the store key in this computer's OS keyring ("remember on this computer")."""
        if self.keyring.backend_name() is None:
            raise KeyUnavailable(
                "There is no usable OS keyring on this computer, so the key cannot be "
                "remembered; keep using the passphrase."
            )
        self.keyring.set(self.info.id, self._kek)
        self.anchors.use_keyring = True

    @property
    def _fresh(self) -> dict[str, bytes]:
        """Keys created by this thread's open write (threads write through one store: the
        HTTP face, a learning worker), so one thread's commit never promotes another's."""
        fresh: dict[str, bytes] | None = getattr(self._local, "fresh", None)
        if fresh is None:
            fresh = self._local.fresh = {}
        return fresh

    @property
    def _touched(self) -> set[ledger.RowRef]:
        """Rows outside the chains this thread's open write changed (see `touched`)."""
        touched: set[ledger.RowRef] | None = getattr(self._local, "touched", None)
        if touched is None:
            touched = self._local.touched = set()
        return touched

    # ---- time -----------------------------------------------------------------------

    def now_micros(self) -> int:
        """The clock's time, never earlier than the last time this store handed out."""
        micros = max(to_micros(self.clock.now()), self._last_micros)
        self._last_micros = micros
        return micros

    def now(self) -> datetime:
        """The clock's current time."""
        return self.clock.now()

    # ---- transactions ---------------------------------------------------------------

    @contextlib.contextmanager
    def write(self) -> Iterator[WriteTxn]:
        """A write transaction: all of it commits or none of it does."""
        ordered = contextlib.ExitStack()
        try:
            with self.engine.connect() as connection:
                connection = connection.execution_options(write=True)
                with connection.begin():
                    txn = WriteTxn(connection)
                    yield txn
                    if txn.erased:
                        from engram.store.pending_erasure import mark

                        mark(self, txn)
                    if self._touched:
                        txn.heads[ledger.CHAIN] = ledger.append(
                            connection, self.info.id, self.signer, self._touched, self.now_micros()
                        )
                    if txn.heads or txn.gone:
                        # Held from before the commit until the checkpoint is rewritten, so
                        # checkpoint updates land in commit order (checkpoint.py).
                        ordered.enter_context(self.checkpoint.locked())
                self._keys.update(self._fresh)
                faults.crash_point(faults.ERASE_COMMITTED if txn.erased else faults.AFTER_COMMIT)
                if txn.erased:
                    self.plaintext_caches.clear()  # before anything below can fail
                written = None
                if txn.heads or txn.gone:
                    written = self.checkpoint.update(self.signer, txn.heads, txn.gone, txn.revived)
                    if written is not None:
                        self.anchors.write_local(written)
        except exc.DBAPIError as error:
            self._raise_failure(error)
        finally:
            ordered.close()
            self._fresh.clear()
            self._touched.clear()
        if written is not None:
            self.anchors.write_keyring(written)

    @contextlib.contextmanager
    def read(self) -> Iterator[Connection]:
        """A read-only snapshot."""
        try:
            with self.engine.connect() as connection:
                yield connection
        except exc.DBAPIError as error:
            self._raise_failure(error)

    def _raise_failure(self, error: exc.DBAPIError) -> NoReturn:
        mapped = self._failure(error)
        if mapped is error:
            raise error
        raise mapped from None

    def _failure(self, error: exc.DBAPIError) -> Exception:
        """A database error as the sentence a person can act on (damage, read-only), or the
        error itself when it is neither (a bug, or a busy database)."""
        kind = failure_kind(error)
        if kind == "damaged":
            start = f"The store at {describe(self.url)} is damaged ({error.orig})"
            return CorruptStore(
                f"{start}; verify its integrity to see where, and restore it from a backup.",
                cli_message=f"{start}; run 'engram verify' to see where, and restore it from a "
                "backup.",
            )
        if kind == "read-only":
            return ReadOnlyStore(
                f"The store at {describe(self.url)} cannot be written (it or its folder is "
                "read-only); nothing was written — make both writable and try again."
            )
        return error

    def touched(self, table: Table, *key: object) -> None:
        """Note that this thread's open write changed a row outside the chains; the write
        records the row as it then stands in the signed ledger before it commits."""
        self._touched.add((table.name, key))

    def hidden_name(self, name: str) -> str:
        """A keyed hash that lets this store recognise a name without revealing it."""
        return crypto.keyed_digest(self._hidden_key, name.encode()).hex()

    # ---- checkpoint and release ------------------------------------------------------

    def start_checkpoint(self, heads: dict[str, tuple[int, bytes]], gone: set[str]) -> Checkpoint:
        """Write a checkpoint from scratch (a new store, or a deliberate re-anchor)."""
        after = self.anchors.highest_serial()  # the keyring is not asked under the lock
        with self.checkpoint.locked():
            started = self.checkpoint.start(self.signer, heads, gone, after_serial=after)
            self.anchors.write_local(started)
        self.anchors.write_keyring(started)
        return started

    def release_requested(self) -> bool:
        """Whether another Engram process asked every holder of this store to let go since
        the last call; if so, this store has already dropped its keys, decrypted text and
        idle connections, and run `release_callbacks` (the inspector polls this)."""
        if self.releases.take_new(force=True) is None:
            return False
        self._let_go()
        return True

    def _let_go(self) -> None:
        self._keys.clear()
        self.plaintext_caches.clear()
        self.engine.dispose()  # idle connections close; ones in use close when returned
        for callback in list(self.release_callbacks):
            callback()

    # ---- data keys ------------------------------------------------------------------

    def _key_aad(self, key_ref: str) -> bytes:
        return f"engram-datakey|{self.info.id}|{key_ref}".encode()

    def data_key(self, conn: Connection, key_ref: str, *, create: bool = False) -> bytes:
        """A person's or conversation's random data key, unwrapped (KeyGone if destroyed)."""
        cached = self._keys.get(key_ref) or self._fresh.get(key_ref)
        if cached is not None:
            return cached
        wrapped = conn.execute(
            select(schema.data_keys.c.wrapped).where(schema.data_keys.c.key_ref == key_ref)
        ).scalar()
        if wrapped is None:
            if not create:
                raise KeyGone(key_ref)
            key = crypto.random_key()
            conn.execute(
                insert(schema.data_keys).values(
                    key_ref=key_ref,
                    wrapped=crypto.seal(self._kek, key, self._key_aad(key_ref)),
                    created_at=self.now_micros(),
                )
            )
            self.touched(schema.data_keys, key_ref)
            self._fresh[key_ref] = key
            return key
        else:
            try:
                key = crypto.unseal(self._kek, wrapped, self._key_aad(key_ref))
            except SealBroken:
                raise CorruptStore(
                    f"The store is damaged: the data key {key_ref!r} does not open."
                ) from None
        self._keys[key_ref] = key
        return key

    def key_opens(self, key_ref: str, wrapped: bytes) -> bool:
        """Whether a wrapped data key row opens (verify; bypasses the key cache)."""
        try:
            crypto.unseal(self._kek, wrapped, self._key_aad(key_ref))
        except SealBroken:
            return False
        return True

    def destroy_key(self, conn: Connection, key_ref: str) -> bool:
        """Crypto-shred: delete a wrapped data key. True if it existed."""
        self._keys.pop(key_ref, None)
        # Derived note keys need this key too: forget every one of them.
        for ref in [r for r in self._keys if r.startswith("note:")]:
            del self._keys[ref]
        result = conn.execute(delete(schema.data_keys).where(schema.data_keys.c.key_ref == key_ref))
        self.touched(schema.data_keys, key_ref)
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


def _info_row(info: StoreInfo) -> dict[str, object]:
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


def _read_info(engine: Engine, url: str) -> StoreInfo:
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
    except exc.DatabaseError:
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
    return KeyUnavailable(
        f"{what_happened}; open it with its passphrase.",
        cli_message=f"{what_happened}; {PASSPHRASE_HINT}.",
    )


def _unlock(info: StoreInfo, passphrase: str | None, access: KeyringAccess) -> bytes:
    if passphrase is not None:
        if info.kek_by_passphrase is None or info.salt is None or info.kdf is None:
            raise KeyUnavailable(
                "This store has no passphrase; it opens with the OS keyring of the computer "
                "it was created on."
            )
        wrapping = crypto.passphrase_key(passphrase, info.salt, info.kdf)
        try:
            return crypto.unseal(wrapping, info.kek_by_passphrase, _kek_aad(info.id))
        except SealBroken:
            raise WrongPassphrase(
                "The passphrase does not open this store; nothing was changed, try again."
            ) from None
    has_passphrase = info.kek_by_passphrase is not None
    backend = access.backend_name()
    if backend is None:
        if has_passphrase:
            raise _needs_passphrase(
                "There is no usable OS keyring on this computer, so the store's key cannot "
                "be fetched from it"
            )
        raise KeyUnavailable(
            "There is no usable OS keyring on this computer and this store has no "
            "passphrase; open it on the computer where it was created."
        )
    kek = access.get(info.id)
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
        crypto.unseal(kek, info.sealed_signing_seed, _signing_aad(info.id))
    except SealBroken:
        raise _needs_passphrase(
            "The key the OS keyring holds for this store does not open it"
        ) from None
    return kek
