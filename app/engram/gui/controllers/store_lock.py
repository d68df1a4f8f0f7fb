"""Opening, creating and locking a store: the unlock page, recent stores, the idle lock.

This is the only controller that opens or closes a Store; it hands the open store to the
hub, whose one signal tells every panel.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QSettings, Signal

from engram.gui.controllers.hub import Hub
from engram.gui.idle_lock import IdleLock
from engram.gui.release_hook import ReleaseHook
from engram.gui.tasks import TaskContext
from engram.store.store import Store

RECENT_STORES = 8


class StoreLockController(QObject):
    """Unlock, create, browse, lock."""

    unlocked = Signal()
    locked = Signal()
    failed = Signal(str)  # the unlock page's own failures (wrong passphrase, damaged store)

    def __init__(self, hub: Hub, settings: QSettings, idle: IdleLock) -> None:
        super().__init__(hub)
        self.hub = hub
        self.w = hub.w
        self.settings = settings
        self.idle = idle
        page = self.w.unlock_page
        page.unlock_requested.connect(self.unlock)
        page.create_requested.connect(self.create)
        page.browse_requested.connect(self.browse)
        self.w.open_action.triggered.connect(self.browse)
        self.w.lock_action.triggered.connect(lambda: self.lock("Locked."))
        self.w.quit_action.triggered.connect(self.quit)
        self.w.closing.connect(lambda: self.lock("Closed."))
        idle.idle.connect(
            lambda: self.lock(f"Locked after {idle.seconds / 60:g} minutes without activity.")
        )
        page.set_recent(self.recent_stores(), None)
        self.w.show_inspector(False)
        # An erasure finishing in another process asks every holder to let go: the store
        # already dropped its keys and decrypted text; every panel reloads what it shows.
        self.release_hook = ReleaseHook(self, on_release=self._let_go)

    def _let_go(self) -> None:
        self.hub.status("Another program erased data in this store; the view was reloaded.")
        self.hub.changed.emit("erased elsewhere")

    def recent_stores(self) -> list[str]:
        """Stores opened before, newest first."""
        value = self.settings.value("recent_stores", [])
        return [str(v) for v in (value if isinstance(value, list) else [value]) if v]

    def browse(self) -> None:
        """Choose a store file; locks the open one, since the other needs its own key."""
        path = self.hub.ask(lambda p: p.open_path())
        if path:
            self.w.unlock_page.set_recent(self.recent_stores(), path)
            if self.hub.store is not None:
                self.lock("Choose how to unlock the other store.")

    def unlock(self, path: str, passphrase: str, remember: bool) -> None:
        """Open a store with its passphrase, or from the OS keyring when none is given."""
        if not path:
            self.w.unlock_page.reset("Choose a store file first.")
            return
        self.w.unlock_page.busy(True, "Unlocking…")

        def work(_: TaskContext) -> Store:
            store = Store.open(path, passphrase=passphrase or None)
            try:
                if remember and passphrase:
                    store.remember_key()
            except BaseException:
                store.close()
                raise
            return store

        self.hub.tasks.run(work, self._opened, self._unlock_failed)

    def create(self, path: str, passphrase: str, remember: bool) -> None:
        """Create a new, empty store."""
        if not path:
            self.w.unlock_page.reset("Type where the new store should go.")
            return
        self.w.unlock_page.busy(True, "Creating…")

        def work(_: TaskContext) -> Store:
            return Store.create(
                path, passphrase=passphrase or None, use_keyring=remember or not passphrase
            )

        self.hub.tasks.run(work, self._opened, self._unlock_failed)

    def _unlock_failed(self, message: str) -> None:
        self.w.unlock_page.reset(message)
        self.failed.emit(message)

    def _opened(self, store: Store) -> None:
        path = store.url.removeprefix("sqlite:///")
        recent = [path, *self.recent_stores()]
        self.settings.setValue("recent_stores", list(dict.fromkeys(recent))[:RECENT_STORES])
        self.w.store_label.setText(path)
        self.w.unlock_page.reset("")
        self.w.show_inspector(True)
        self.w.people.setFocus()  # never the passphrase field, hidden now
        self.idle.arm()
        self.release_hook.watch(store)
        # What is alive now lives as long as the session: keep the collector off it, so its
        # full passes stay short while the person scrolls.
        gc.collect()
        gc.freeze()
        self.hub.set_store(store)
        self.unlocked.emit()

    def lock(self, message: str = "Locked.") -> None:
        """Drop every decrypted thing and the key; the unlock page asks again."""
        hub = self.hub
        hub.prompts.close_all()  # no dialog stays above the unlock page, nor acts later
        self.idle.disarm()
        self.release_hook.watch(None)
        store = hub.store
        hub.set_store(None)  # every panel cancels its long work and forgets what it showed
        hub.tasks.wait()
        if store is not None:
            store.close()
        w = self.w
        w.store_label.setText("")  # the status bar names neither the store nor the person
        w.statusBar().clearMessage()
        w.show_inspector(False)
        w.unlock_page.set_recent(self.recent_stores(), None)
        w.unlock_page.reset(message)
        self.locked.emit()

    def quit(self) -> None:
        """Lock (closing every dialog), then close the window."""
        self.lock("Closed.")
        self.w.close()
