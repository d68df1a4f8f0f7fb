"""An unlocked store, held open: its data keys, signing, transactions, checkpoint, release.

How a store is created and opened (and what opening finishes) is in store.py, whose
`Store` is this with those added; the modules that opening itself reaches (pending
erasures) take this type, so store.py imports them and never the other way round.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any, NoReturn

from sqlalchemy import Connection, Engine, Table, exc, update

from engram.model.clock import Clock, to_micros
from engram.model.errors import CorruptStore, KeyUnavailable, ReadOnlyStore
from engram.store import contexts, crypto, faults, ledger, schema, signed_heads
from engram.store.checkpoint import Anchor, CheckpointFile
from engram.store.checkpoint_anchor import Anchors
from engram.store.crypto import KdfParams, SealBroken, Signer
from engram.store.data_keys import DataKeys
from engram.store.dialect import sqlite_path
from engram.store.keyring_access import KeyringAccess
from engram.store.ledger_check import LedgerView
from engram.store.location import checkpoint_path, describe
from engram.store.release import ReleaseRequests, end_old_reads
from engram.store.storage_faults import Doing, from_database
from engram.store.store_info import StoreInfo, info_row, rewrapped, unlock
from engram.store.store_time import ClockBehind
from engram.store.write_txn import WriteTxn

log = logging.getLogger(__name__)

# What every change to a store opened read-only says (issue 17 item 12), in every face.
READ_ONLY_SENTENCE = (
    "This store is open read-only, because its file or the folder it is in cannot be written "
    "(a copy on read-only media, say), so nothing was changed; to change it, copy it with its "
    ".checkpoint file to a folder you can write to and open that copy."
)


class UnlockedStore:
    """An open, unlocked store. Everything that reads or writes goes through one of these.

    It owns its data keys (`keys`, data_keys.py): the store key and every key unwrapped
    with it live there, and nowhere else.

    One Store serves several threads at once (the HTTP face, the learning worker, the
    inspector's interactive lane and jobs lane): there is no shared session or connection.
    Each `read()` and `write()` checks out a connection of its own from the engine's pool
    (SQLAlchemy's QueuePool; for SQLite, WAL lets readers go on beside the one writer, and
    writers queue at BEGIN IMMEDIATE for up to the busy timeout, without the GIL); what a
    write collects on the way (fresh keys, touched rows, the checkpoint lock's depth) is
    per thread; the key cache needs no lock (data_keys.py); the other shared caches have
    locks of their own (plaintext caches, ledger view, the clock below). So no lock spans
    both lanes: a long read never holds a short one back.
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
        try:
            seed = info.signing_seed(kek)
        except SealBroken:
            raise CorruptStore(
                f"The store at {describe(url)} is damaged: its signing key does not open."
            ) from None
        self.signer = Signer(seed)
        if self.signer.verify_key != info.verify_key:
            raise CorruptStore(f"The store at {describe(url)} is damaged: its keys disagree.")
        # What this thread's open write collects on the way (the rows it touched).
        self._local = threading.local()
        self.keys = DataKeys(info.id, kek, self.now_micros, self.touched)
        self._hidden_key = crypto.digest(contexts.HIDDEN_NAMES, self.signer.seed)
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

    def close(self) -> None:
        """Drop decrypted keys and release the database; what other threads still ask of
        it fails (KeyUnavailable) instead of opening a new connection."""
        self.closed = True
        self.keys.close()
        self.plaintext_caches.clear()
        self.pseudonyms.clear()
        self.engine.dispose()

    def remember_key(self) -> None:
        """Put the store key in this computer's OS keyring ("remember on this computer")."""
        if self.keyring.usable_backend() is None:
            raise KeyUnavailable(
                "There is no usable OS keyring on this computer, so the key cannot be "
                "remembered; keep using the passphrase."
            )
        self.keyring.set(self.info.id, self.keys.kek)
        self.anchors.use_keyring = True

    def change_passphrase(self, passphrase: str, *, kdf: KdfParams | None = None) -> None:
        """Seal the store key under a new passphrase (a fresh salt), replacing the old
        sealed key in one transaction: the old passphrase stops opening this store, the
        key itself (so every row, and any keyring entry) stays as it was. A store that had
        no passphrase gets one. Derived before the write, so no lock waits on Argon2id."""
        if not passphrase:
            raise KeyUnavailable("The passphrase is empty; choose one with some characters.")
        if self.read_only:
            raise ReadOnlyStore(READ_ONLY_SENTENCE)
        changed = rewrapped(self.info, self.keys.kek, passphrase, kdf or crypto.DEFAULT_KDF)
        table = schema.store_info
        with self.write() as txn:
            done = txn.conn.execute(
                update(table).where(table.c.id == self.info.id).values(**info_row(changed))
            )
            if done.rowcount != 1:
                raise CorruptStore(
                    f"The store at {describe(self.url)} is damaged: its store info row is "
                    "missing; nothing was changed."
                )
            self.touched(table, self.info.id)  # the signed ledger records the new row
            faults.crash_point(faults.PASSPHRASE_REWRAPPED)
        self.info = changed

    def forget_key(self, passphrase: str) -> bool:
        """Remove this store's key from this computer's OS keyring (nothing else changes),
        once `passphrase` is shown to open the store: refused (WrongPassphrase) when it
        does not, and for a store without a passphrase, which nothing else would open.
        False when the keyring held no key for it (then nothing was asked of it)."""
        if self.info.kek_by_passphrase is None:
            raise KeyUnavailable(
                "This store has no passphrase, so its key in this computer's keyring is the "
                "only way to open it; it was kept — give the store a passphrase first."
            )
        if unlock(self.info, passphrase, self.keyring) != self.keys.kek:
            raise CorruptStore(
                f"The store at {describe(self.url)} is damaged: its passphrase opens another "
                "key; nothing was changed."
            )
        if self.keyring.usable_backend() is None or self.keyring.get(self.info.id) is None:
            return False
        self.keyring.delete(self.info.id)
        if self.keyring.get(self.info.id) is not None:
            raise KeyUnavailable(
                "The OS keyring still holds the store's key after it was asked to remove it; "
                "remove the entry 'engram' for this store in the keyring manager."
            )
        self.anchors.use_keyring = None  # ask again whether the keyring anchors it
        return True

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
                    txn.run_before_commit()
                    if self._touched:
                        txn.heads[ledger.CHAIN] = ledger.append(
                            connection, self.info.id, self.signer, self._touched, self.now_micros()
                        )
                    faults.crash_point(faults.APPENDED)
                    if txn.heads or txn.gone:
                        # One signature per chain this write moved, in this same
                        # transaction: no commit leaves an unsigned tail (signed_heads.py).
                        signed_heads.record(
                            connection,
                            self.info.id,
                            self.signer,
                            self.hidden_name,
                            txn.heads,
                            txn.gone,
                            self.now_micros(),
                        )
                    if txn.heads or txn.gone:
                        # Held from before the commit until the checkpoint is written, so its
                        # lines land in commit order (checkpoint.py). A lock that cannot be
                        # had fails the checkpoint's update, not the write: it warns below.
                        try:
                            ordered.enter_context(self.checkpoint.locked())
                        except OSError as error:
                            unlocked = error
                self.keys.commit_fresh()
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
            self.keys.drop_fresh()
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
        self.keys.forget()
        self.plaintext_caches.clear()
        self.engine.dispose()  # idle connections close; ones in use close when returned
        for callback in list(self.release_callbacks):
            callback()
