"""File › Back up… and File › Restore from backup… (issue 21 item 1): the window's half of
`engram backup` and `engram restore`, through the same control/backup.py.

Both run in the jobs lane (the strip shows them; neither is cancelled part-way, since a
half-placed file is what they exist to prevent). Every question goes through the prompt
host, so a lock closes it and the action it was for does nothing. Restoring over the store
open in the window locks it first: the store is replaced underneath, and what the window
had decrypted from it must not outlive that.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from engram.control import backup
from engram.gui.controllers.hub import Hub
from engram.gui.controllers.store_lock import StoreLockController
from engram.gui.dialogs import documents_folder
from engram.store import file_check
from engram.store.dialect import sqlite_path
from engram.store.location import stores_folder

# Why Back up… is off for a store kept in a database server (the sentence says what to use).
SERVER_STORE = "Kept in a database server: back it up with the server's own tool."
BACKED_UP_TITLE = "Backup saved"
RESTORED_TITLE = "Backup restored"


class BackupController(QObject):
    """Back up the open store; restore a backup (with or without a store open)."""

    backed_up = Signal(str)  # the backup's path
    restored = Signal(str)  # the restored store's path

    def __init__(self, hub: Hub, store_lock: StoreLockController) -> None:
        super().__init__(hub)
        self.hub = hub
        self.w = hub.w
        self.store_lock = store_lock
        self.w.backup_action.triggered.connect(self.back_up)
        self.w.restore_action.triggered.connect(self.restore)
        # The store generation a backup or restore was started in; a lock or unlock since
        # drops its result (hub.run), so another may start.
        self._started: int | None = None
        hub.session_changed.connect(self._update_actions)
        self._update_actions()

    @property
    def running(self) -> bool:
        """Whether a backup or restore started in this store generation is still going."""
        return self._started == self.hub.store_generation

    def _update_actions(self) -> None:
        store = self.hub.store
        server = store is not None and sqlite_path(store.url) is None
        self.w.backup_action.setEnabled(store is not None and not server)
        self.w.backup_action.setToolTip(
            SERVER_STORE
            if server
            else "Write a consistent copy of this store, readable by you only"
        )
        self.w.restore_action.setToolTip(
            "Put a backup back as a store: checked first, then re-anchored"
        )

    # ---- backing up ---------------------------------------------------------------------

    def back_up(self) -> None:
        """Ask where (documents folder first), then snapshot the open store there, with its
        checkpoint beside it, off the UI thread."""
        store = self.hub.store
        if store is None or self.running:
            return
        source = sqlite_path(store.url)
        if source is None:
            self.hub.fail(backup.SERVER_BACKUP)
            return
        suggested = f"{source.stem}-backup-{date.today().isoformat()}.engram"
        path = self.hub.ask(
            lambda p: p.save_path(suggested, "Back up this store"), "no backup was written."
        )
        if not path:
            return
        # The save dialog asked before choosing a file that is there already.
        replace = Path(path).exists()

        def done(written: backup.BackupWritten) -> None:
            self._started = None
            beside = " Its checkpoint is beside it, as the same name with .checkpoint added."
            text = (
                f"The store was copied to {written.path} while it stayed in use."
                f"{beside if written.checkpoint else ''}\n\n"
                "The copy is encrypted as the store is and opens with the same passphrase; "
                "only your user account can read the file. To put it back, choose File › "
                "Restore from backup…"
            )
            self.hub.status(f"Backed up the store to {written.path}.", 10_000)
            self.backed_up.emit(str(written.path))
            self.hub.prompts.inform(BACKED_UP_TITLE, text)

        def failed(message: str) -> None:
            self._started = None
            self.hub.fail(message)

        self._started = self.hub.store_generation
        self.hub.status("Backing up the store…", 60_000)
        self.hub.run(
            lambda _ctx: backup.backup_store(store, path, replace=replace),
            done,
            failed,
            store_wide=True,
            job="Backing up the store",
            changes=True,
        )

    # ---- restoring ----------------------------------------------------------------------

    def restore(self) -> None:
        """Ask which backup, where it goes (asking again before replacing a store there)
        and its passphrase; then check it, put it in place and re-anchor it, off the UI
        thread. The restored store waits on the unlock page for its passphrase."""
        if self.running:
            return
        open_path = self._open_path()
        start = str(Path(open_path).parent) if open_path else documents_folder()
        chosen = self.hub.ask(lambda p: p.backup_file(start), "nothing was restored.")
        if not chosen:
            return
        folder = stores_folder()
        if not folder.is_dir():  # no store was ever made here: somewhere that exists
            folder = Path(documents_folder())
        suggested = str(folder / f"{Path(chosen).stem}-restored.engram")
        target = self.hub.ask(lambda p: p.restore_target(suggested), "nothing was restored.")
        if not target:
            return
        target_path = Path(target).expanduser()
        here = open_path is not None and _same(target_path, Path(open_path))
        replace = False
        if file_check.holds_store(target_path):
            if here:
                question = (
                    f"{target_path} is the store open in this window. Restoring replaces "
                    "everything in it with the backup's content; what was written since "
                    "the backup was taken is lost.\n\nThe window locks first, and the "
                    "restored store then asks for its passphrase."
                )
            else:
                question = (
                    f"There is already a store at {target_path}. Restoring replaces "
                    "everything in it with the backup's content; what was written since "
                    "the backup was taken is lost."
                )
            replace = bool(
                self.hub.ask(
                    lambda p: p.question("Replace the store?", question, "&Replace") or None,
                    "nothing was restored.",
                )
            )
            if not replace:
                return
        secret = self.hub.ask(lambda p: p.backup_passphrase(chosen), "nothing was restored.")
        if secret is None:
            return
        if here:  # the store is replaced under the window: nothing of it stays open
            self.store_lock.lock("Locked: this store is being restored from a backup.")
        actor = self.hub.actor or "operator"

        def done(restored: backup.Restored) -> None:
            self._started = None
            where = str(restored.path)
            how = "replaced the store at" if restored.replaced else "put it in place as"
            text = (
                f"Engram checked every chain and signature of the backup, {how} {where}, "
                "and re-anchored it: a new checkpoint vouches for it as it is now, and the "
                "store's signed record says who restored it and when, so checking its "
                "integrity accepts it.\n\nIt opens with the same passphrase as the store "
                "the backup was taken from."
            )
            self.hub.status(f"Restored the backup as {where}.", 10_000)
            self._offer(where)
            self.restored.emit(where)
            self.hub.prompts.inform(RESTORED_TITLE, text)

        def failed(message: str) -> None:
            self._started = None
            self.hub.fail(message)

        self._started = self.hub.store_generation
        self.hub.status("Restoring the backup…", 60_000)
        self.hub.run(
            lambda _ctx: backup.restore_backup(
                chosen, target_path, actor=actor, replace=replace, passphrase=secret or None
            ),
            done,
            failed,
            store_wide=True,
            job="Restoring a backup",
            changes=True,
        )

    def _open_path(self) -> str | None:
        store = self.hub.store
        found = sqlite_path(store.url) if store is not None else None
        return str(found) if found is not None else None

    def _offer(self, path: str) -> None:
        """The restored store among the recent ones; on the unlock page when it shows."""
        lock = self.store_lock
        lock.set_recent_stores([path, *lock.recent_stores()])
        if self.hub.store is None:
            self.w.unlock_page.set_recent(lock.recent_stores(), path)


def _same(one: Path, other: Path) -> bool:
    try:
        return one.resolve() == other.resolve()
    except OSError:
        return False
