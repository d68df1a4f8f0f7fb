"""Creating and opening a store; what it holds once open is in unlocked.py.

The store's info row and unlocking it are in store_info.py; its data keys in data_keys.py.
Opening finishes what an earlier erasure left pending (pending_erasure.py), which is why
this module sits above them: they take the `UnlockedStore` this one builds on.
"""

from __future__ import annotations

import contextlib
import secrets

from sqlalchemy import Connection, exc, insert, inspect

from engram.model.clock import Clock, SystemClock
from engram.model.errors import (
    CorruptStore,
    KeyUnavailable,
    NotAStore,
    ReadOnlyStore,
    StoreExists,
    StoreMissing,
)
from engram.store import crypto, file_check, ledger, migrate, owner_only, schema, signed_heads
from engram.store.crypto import KdfParams, Signer
from engram.store.dialect import make_engine, sqlite_path
from engram.store.keyring_access import KeyringAccess, KeyringFailed
from engram.store.location import describe, store_url
from engram.store.pending_erasure import finish_on_open
from engram.store.storage_faults import faults_of
from engram.store.store_info import PASSPHRASE_HINT, info_row, new_info, read_info, unlock
from engram.store.unlocked import READ_ONLY_SENTENCE, UnlockedStore
from engram.store.write_txn import WriteTxn

__all__ = ["READ_ONLY_SENTENCE", "Store", "WriteTxn"]


def _not_created(failed: KeyringFailed) -> KeyUnavailable:
    """The keyring failed while a store was being created: nothing was."""
    return KeyUnavailable(
        f"Cannot create a store: {failed.what[0].lower()}{failed.what[1:]}; nothing was "
        "created — try again, or create it with a passphrase and without the keyring."
    )


class Store(UnlockedStore):
    """An open, unlocked store (unlocked.py), made by `create` or `open`.

    Everything that reads or writes goes through one of these.
    """

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
        try:
            backend = access.usable_backend() if use_keyring else None
        except KeyringFailed as failed:
            raise _not_created(failed) from None
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
                owner_only.make_folders(path.parent)
            file_check.check_folder_writable(path, "create")
        engine = make_engine(url)
        with faults_of(url, "open"):
            exists = path is None and inspect(engine).has_table("store_info")
        if exists:
            raise StoreExists(f"A store already exists at {describe(url)}; open it instead.")

        clock = clock or SystemClock()
        kdf = kdf or crypto.DEFAULT_KDF
        kek = crypto.random_key()
        store_id = "s_" + secrets.token_hex(8)
        signer = Signer.generate()
        info = new_info(
            store_id,
            kek,
            signer,
            clock,
            passphrase=passphrase,
            kdf=kdf,
            keyring_backend=backend,
        )  # derived before any file is made: limits it refuses leave nothing behind
        if path is not None:
            # Owner-only from the first byte; SQLite gives -wal and -shm the file's mode.
            owner_only.create_file(path)
        if backend is not None:  # before the store exists: a store whose key went nowhere
            try:  # could never be opened
                access.set(store_id, kek)
            except KeyringFailed as failed:
                if path is not None:
                    path.unlink(missing_ok=True)  # made just above, empty
                raise _not_created(failed) from None
        try:
            with faults_of(url, "write"), engine.connect() as connection:
                connection = connection.execution_options(write=True)
                with connection.begin():
                    migrate.upgrade(connection)
                    connection.execute(insert(schema.store_info).values(**info_row(info)))
                    head = ledger.append(connection, store_id, signer, None, info.created_at)
                    signed_heads.record(
                        connection,
                        store_id,
                        signer,
                        signed_heads.hider(signer.seed),
                        {ledger.CHAIN: head},
                        (),
                        info.created_at,
                    )
        except BaseException:
            engine.dispose()
            if backend is not None:
                with contextlib.suppress(KeyUnavailable):
                    access.delete(store_id)  # the key of a store that was never made
            if path is not None:  # the files are this call's own (none was there before)
                for made in (path, *(path.with_name(path.name + end) for end in ("-wal", "-shm"))):
                    made.unlink(missing_ok=True)
            raise
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
        read_only = False
        if path is not None:
            # Before anything can write to the file; a file or folder that cannot be written
            # (a copy on read-only media) is opened read-only rather than refused.
            read_only = file_check.check_before_open(path)
            if not read_only:
                owner_only.tighten_sqlite_files(path)
        engine = make_engine(url, read_only=read_only)
        try:
            info = read_info(engine, url)
            access = keyring or KeyringAccess()
            kek = unlock(info, passphrase, access)
            store = cls(url, engine, info, kek, clock or SystemClock(), access, read_only=read_only)
            # The key came from the keyring, or (a passphrase) ask it when first needed.
            store.anchors.use_keyring = True if passphrase is None else None
            if not read_only:
                store.checkpoint.tighten()
            store.anchors.tighten()
            store._bring_up_to_date()
        except BaseException:
            # Close every connection so SQLite leaves the files exactly as they were.
            engine.dispose()
            raise
        if not read_only:  # a pending erasure stays pending; verify says so
            finish_on_open(store)
        return store

    def _bring_up_to_date(self) -> None:
        """Refuse a missing or unknown schema revision; upgrade an older one."""
        where = describe(self.url)
        try:
            with self.engine.connect() as connection:
                current = migrate.current_revision(connection)
        except (exc.DBAPIError, migrate.RevisionUnreadable) as error:
            self._raise_fault(error, "open")
            raise CorruptStore(
                f"The store at {where} is damaged: the record of its schema version "
                "(alembic_version) cannot be read; restore it from a backup."
            ) from None
        if current == migrate.head_revision():
            return
        if current is not None and self.read_only and current in migrate.known_revisions():
            raise ReadOnlyStore(
                f"The store at {where} was made by an older Engram and must be upgraded before "
                "it can be read, which cannot be done where it cannot be written; nothing was "
                "changed — copy it with its .checkpoint file to a folder you can write to."
            )
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
        from alembic.util import CommandError  # only to upgrade: a current store needs none

        heads: dict[str, tuple[int, bytes]] = {}

        def record_every_row(connection: Connection) -> None:
            heads[ledger.CHAIN] = ledger.append(
                connection, self.info.id, self.signer, None, self.now_micros()
            )

        def sign_heads(connection: Connection) -> None:
            signed_heads.sign_existing(
                connection, self.info.id, self.signer, self.hidden_name, self.now_micros()
            )

        try:
            with self.engine.connect() as connection:
                connection = connection.execution_options(write=True)
                with connection.begin():
                    migrate.upgrade(connection, record_every_row, sign_heads)
        except (exc.DBAPIError, CommandError) as error:
            self._raise_fault(error, "write")
            raise CorruptStore(
                f"The store at {where} says it has schema version {current}, but upgrading it "
                "from there failed, so that record or its tables were changed; nothing was "
                "changed — restore it from a backup."
            ) from None
        if heads:
            written = self.record_in_checkpoint(heads, (), ())
            if written is not None:
                self.anchors.write_keyring(written)
