"""Opening, creating and holding a store: keys, signing, transactions, checkpoint.

The store's info row and unlocking it are in store_info.py; its data keys in data_keys.py.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NoReturn

from alembic.util import CommandError
from sqlalchemy import Connection, Engine, Table, exc, insert, inspect

from engram.model.clock import Clock, SystemClock, to_micros
from engram.model.errors import (
    CorruptStore,
    KeyUnavailable,
    NotAStore,
    ReadOnlyStore,
    StoreExists,
    StoreMissing,
)
from engram.store import crypto, faults, file_check, ledger, migrate, owner_only, schema
from engram.store.checkpoint import Anchor, CheckpointFile
from engram.store.checkpoint_anchor import Anchors
from engram.store.crypto import KdfParams, SealBroken, Signer
from engram.store.data_keys import DataKeys
from engram.store.dialect import make_engine, sqlite_path
from engram.store.keyring_access import KeyringAccess, KeyringFailed
from engram.store.ledger_check import LedgerView
from engram.store.location import checkpoint_path, describe, store_url
from engram.store.release import ReleaseRequests, end_old_reads
from engram.store.storage_faults import Doing, faults_of, from_database
from engram.store.store_info import (
    PASSPHRASE_HINT,
    StoreInfo,
    info_row,
    new_info,
    read_info,
    unlock,
)
from engram.store.store_time import ClockBehind

log = logging.getLogger(__name__)


def _not_created(failed: KeyringFailed) -> KeyUnavailable:
    """The keyring failed while a store was being created: nothing was."""
    return KeyUnavailable(
        f"Cannot create a store: {failed.what[0].lower()}{failed.what[1:]}; nothing was "
        "created — try again, or create it with a passphrase and without the keyring."
    )


# What every change to a store opened read-only says (issue 17 item 12), in every face.
READ_ONLY_SENTENCE = (
    "This store is open read-only, because its file or the folder it is in cannot be written "
    "(a copy on read-only media, say), so nothing was changed; to change it, copy it with its "
    ".checkpoint file to a folder you can write to and open that copy."
)


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


class Store(DataKeys):
    """An open, unlocked store. Everything that reads or writes goes through one of these.

    Its data-key methods (data_key, text_key, destroy_key, ...) are in data_keys.py.

    One Store serves several threads at once (the HTTP face, the learning worker, the
    inspector's interactive lane and jobs lane): there is no shared session or connection.
    Each `read()` and `write()` checks out a connection of its own from the engine's pool
    (SQLAlchemy's QueuePool; for SQLite, WAL lets readers go on beside the one writer, and
    writers queue at BEGIN IMMEDIATE for up to the busy timeout, without the GIL); what a
    write collects on the way (fresh keys, touched rows, the checkpoint lock's depth) is
    per thread; the key cache is changed only by single dict operations (atomic under the
    GIL) and copied before it is walked; the other shared caches have locks of their own
    (plaintext caches, ledger view, the clock below). So no lock spans both lanes: a long
    read never holds a short one back.
    """

    def __init__(
        self,
        url: str,
        engine: Engine,
        info: StoreInfo,
        kek: bytes,
        clock: Clock,
        keyring: KeyringAccess,
        *,
        read_only: bool = False,
    ) -> None:
        self.url = url
        # Opened read-only (its file or folder cannot be written): every write is refused
        # with READ_ONLY_SENTENCE, and nothing is written beside the file, checkpoint included.
        self.read_only = read_only
        self.engine = engine
        self.info = info
        self.clock = clock
        self.keyring = keyring
        self._kek = kek
        try:
            seed = info.signing_seed(kek)
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
        # Each row's latest digest in the signed ledger, for the runtime's checks (ledger_check).
        self.ledger_view = LedgerView(ledger.ledger_key(self.signer.seed))
        self.pseudonyms: dict[str, str] = {}  # name -> pseudonym (pseudonyms.py), per store
        self.checkpoint = CheckpointFile(
            checkpoint_path(url, info.id), info.id, info.verify_key, self.hidden_name
        )
        self.anchors = Anchors(self.checkpoint.path, info.id, keyring)
        self._last_micros = 0
        self.closed = False
        self._clock_lock = threading.Lock()  # now_micros is read-modify-write, on any thread
        # Journals this store met the clock behind (store_time.py): the faces warn.
        self.clock_behind: dict[str, ClockBehind] = {}
        # Plaintext-derived data the layers above keep for speed (decrypted logs, search
        # indexes). It lives only while this store is open: close() and every erasure this
        # store commits clear it. An erasure committed by another process reaches a held
        # copy when it is next read (an excision entry, or the conversation gone).
        self.plaintext_caches: dict[str, Any] = {}
        # Another Engram process finishing an erasure asks this one to let go (release.py).
        self.releases = ReleaseRequests(sqlite_path(url))
        self.release_callbacks: list[Callable[[], None]] = []
        # Sentences for whoever drives this store: what went wrong after a commit, when the
        # change itself is kept (issue 15 item 6). Faces print or show `take_warnings()`.
        self.warnings: deque[str] = deque(maxlen=20)
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
            from engram.store.pending_erasure import finish_on_open

            finish_on_open(store)
        return store

    def _bring_up_to_date(self) -> None:
        """Refuse a missing or unknown schema revision; upgrade an older one."""
        where = describe(self.url)
        try:
            with self.engine.connect() as connection:
                current = migrate.current_revision(connection)
        except (exc.DBAPIError, CommandError) as error:
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

    def close(self) -> None:
        """Drop decrypted keys and release the database; what other threads still ask of
        it fails (KeyUnavailable) instead of opening a new connection."""
        self.closed = True
        self._keys.clear()
        self.plaintext_caches.clear()
        self.pseudonyms.clear()
        self._kek = b""
        self.engine.dispose()

    def remember_key(self) -> None:
        """Put the store key in this computer's OS keyring ("remember on this computer")."""
        if self.keyring.usable_backend() is None:
            raise KeyUnavailable(
                "There is no usable OS keyring on this computer, so the key cannot be "
                "remembered; keep using the passphrase."
            )
        self.keyring.set(self.info.id, self._kek)
        self.anchors.use_keyring = True

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
        with self._clock_lock:
            micros = max(to_micros(self.clock.now()), self._last_micros)
            self._last_micros = micros
        return micros

    def now(self) -> datetime:
        """The clock's current time."""
        return self.clock.now()

    def saw_clock(self, behind: ClockBehind | None) -> None:
        """Remember (and log, once per chain) that the clock is behind a chain's newest
        entry; None is the usual case, a clock in order."""
        if behind is not None and behind.chain not in self.clock_behind:
            log.warning("%s", behind.sentence())
        if behind is not None:
            self.clock_behind[behind.chain] = behind

    # ---- transactions ---------------------------------------------------------------

    @contextlib.contextmanager
    def write(self) -> Iterator[WriteTxn]:
        """A write transaction: all of it commits or none of it does (refused, with one
        sentence, on a store opened read-only)."""
        if self.read_only:
            raise ReadOnlyStore(READ_ONLY_SENTENCE)
        self._still_open()
        ordered = contextlib.ExitStack()
        unlocked: OSError | None = None
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
                        # Held from before the commit until the checkpoint is written, so its
                        # lines land in commit order (checkpoint.py). A lock that cannot be
                        # had fails the checkpoint's update, not the write: it warns below.
                        try:
                            ordered.enter_context(self.checkpoint.locked())
                        except OSError as error:
                            unlocked = error
                self._keys.update(self._fresh)
                faults.crash_point(faults.ERASE_COMMITTED if txn.erased else faults.AFTER_COMMIT)
                if txn.erased:
                    self.plaintext_caches.clear()  # before anything below can fail
                written = None
                if unlocked is not None:  # out of commit order it must not be written at all
                    self._warn(None, f"the store's checkpoint at {self.checkpoint.path}", unlocked)
                elif txn.heads or txn.gone:
                    written = self.record_in_checkpoint(
                        txn.heads, txn.gone.values(), txn.revived.values()
                    )
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
        self._still_open()
        try:
            with self.engine.connect() as connection:
                yield connection
        except exc.DBAPIError as error:
            self._raise_failure(error, "read")

    def _still_open(self) -> None:
        if self.closed:  # a job the window dropped at a lock, reaching for the store again
            raise KeyUnavailable("The store was locked; unlock it to go on.")

    def _raise_failure(self, error: exc.DBAPIError, doing: Doing = "write") -> NoReturn:
        mapped = self._failure(error, doing)
        if mapped is error:
            raise error
        raise mapped from None

    def _failure(self, error: exc.DBAPIError, doing: Doing = "write") -> Exception:
        """A database error as the sentence a person can act on (damage, a full disk, an
        I/O error, a read-only file, a server that does not answer: storage_faults.py), or
        the error itself when it is none of them (a bug, or a busy database)."""
        return from_database(error, self.url, doing) or error

    def _raise_fault(self, error: Exception, doing: Doing) -> None:
        """Raise the fault (not damage) a database error reports, if it reports one: a
        full disk while upgrading is no sign of a changed schema record."""
        if isinstance(error, exc.DBAPIError):
            mapped = from_database(error, self.url, doing)
            if mapped is not None and not isinstance(mapped, CorruptStore):
                raise mapped from None

    def touched(self, table: Table, *key: object) -> None:
        """Note that this thread's open write changed a row outside the chains; the write
        records the row as it then stands in the signed ledger before it commits."""
        self._touched.add((table.name, key))

    def hidden_name(self, name: str) -> str:
        """A keyed hash that lets this store recognise a name without revealing it."""
        return crypto.keyed_digest(self._hidden_key, name.encode()).hex()

    # ---- checkpoint and release ------------------------------------------------------

    def record_in_checkpoint(
        self,
        heads: dict[str, tuple[int, bytes]],
        gone: Iterable[str],
        revived: Iterable[str],
        warnings: list[str] | None = None,
    ) -> Anchor | None:
        """Add a committed write to the checkpoint and to this computer's anchor; returns
        the anchor for the keyring (written by the caller, outside the lock). What
        committed stays committed: a failure here is a warning (in `warnings`, else this
        store's), and the checkpoint lags until the next write or verify advances it."""
        if self.read_only:  # nothing is written beside a read-only store
            return None
        written: Anchor | None = None
        try:
            with self.checkpoint.locked():
                written = self.checkpoint.update(self.signer, heads, gone, revived)
                if written is not None:
                    try:
                        self.anchors.write_local(written)
                    except Exception as error:
                        self._warn(
                            warnings, f"the checkpoint's anchor in {self.anchors.folder}", error
                        )
        except Exception as error:
            self._warn(warnings, f"the store's checkpoint at {self.checkpoint.path}", error)
            return None
        return written

    def _warn(self, into: list[str] | None, what: str, error: Exception) -> None:
        reason = error.strerror if isinstance(error, OSError) else None
        sentence = (
            f"The change was saved, but {what} could not be updated "
            f"({reason or error or type(error).__name__}); the checkpoint lags behind the "
            "store until the next write or a verify brings it up to date."
        )
        log.warning(sentence)
        (self.warnings if into is None else into).append(sentence)

    def take_warnings(self) -> list[str]:
        """The warnings since the last call (see `warnings`), oldest first."""
        taken = list(self.warnings)
        self.warnings.clear()
        return taken

    def start_checkpoint(self, heads: dict[str, tuple[int, bytes]], gone: set[str]) -> Anchor:
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
