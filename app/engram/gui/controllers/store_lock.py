"""Opening, creating and locking a store: the unlock page, recent stores, the idle lock.

This is the only controller that opens or closes a Store; it hands the open store to the
hub, whose one signal tells every panel.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QApplication

from engram.control.demo import DEMO_PASSPHRASE, build_demo, default_demo_path
from engram.control.review_copy import review_copy_info
from engram.gui.controllers.hub import Hub
from engram.gui.idle_lock import IdleLock
from engram.gui.keyring_probe import KeyringProbe
from engram.gui.new_store_dialog import NewStoreSecret
from engram.gui.release_hook import ReleaseHook
from engram.gui.tasks import TaskContext
from engram.model.errors import KeyUnavailable
from engram.store.location import stores_folder
from engram.store.store import Store

RECENT_STORES = 8


@dataclass(frozen=True, slots=True)
class Opened:
    """A store that opened, and what to tell the person about it."""

    store: Store
    title: str = ""  # a confirmation worth stopping for ("Store created")
    text: str = ""
    gist: str = ""  # the status bar's short version of `text`
    # Say it once the first person is on screen: the demo opens a person at once, and
    # asking who is acting then would stack a second dialog over this one.
    after_first_person: bool = False
    # What a review copy says about itself (issue 21 item 3), read where the store was
    # opened (off the UI thread); empty for any other store.
    review: str = field(default="", init=False)

    def __post_init__(self) -> None:
        info = review_copy_info(self.store)
        object.__setattr__(self, "review", info.sentence() if info else "")


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
        page.create_requested.connect(self.new_store)
        page.browse_requested.connect(self.browse)
        page.demo_requested.connect(self.open_demo)
        self.w.open_action.triggered.connect(self.browse)
        self.w.new_store_action.triggered.connect(self.new_store)
        self.w.open_demo_action.triggered.connect(self.open_demo)  # the welcome's own path
        self.probe = KeyringProbe(hub.tasks, self)
        self.probe.changed.connect(lambda: page.set_keyring(self.probe.usable, self.probe.reason))
        page.set_keyring(None, self.probe.reason)
        self.probe.check()
        self.w.lock_action.triggered.connect(lambda: self.lock("Locked."))
        self.w.quit_action.triggered.connect(self.quit)
        self.w.closing.connect(lambda: self.lock("Closed."))
        idle.idle.connect(
            lambda: self.lock(f"Locked after {_minutes(idle.seconds)} without activity.")
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

    def set_recent_stores(self, paths: list[str]) -> None:
        """Keep `paths` as the recent stores (newest first, at most RECENT_STORES)."""
        self.settings.setValue("recent_stores", list(dict.fromkeys(paths))[:RECENT_STORES])
        if self.hub.store is None:
            self.w.unlock_page.set_recent(self.recent_stores(), None)

    def choose(self, path: str) -> None:
        """File › Open recent: the store on the unlock page, ready for its passphrase; the
        open store locks first, since the other needs its own key."""
        if self.hub.store is not None:
            self.lock("Choose how to unlock the other store.")
        self.w.unlock_page.set_recent(self.recent_stores(), path)  # focus: the passphrase

    def launch(self, path: str | None, passphrase: str | None = None) -> None:
        """What the window starts with (`engram desk [STORE]`, the desktop entry): the store
        named, ready for its passphrase (unlocked at once when one is given). A store that
        is not there is not offered: with nothing recent the welcome shows instead, else
        the recent stores, under a line saying the named one is missing."""
        page, recent = self.w.unlock_page, self.recent_stores()
        if path and "://" not in path and not Path(path).expanduser().exists():
            page.set_recent(recent, None)
            if recent:
                page.message.setText(
                    f"There is no store at {path}; choose another store, or use File › New "
                    "store… or File › Open the demo."
                )
            return
        page.set_recent(recent, path)
        if path and passphrase is not None:
            self.unlock(path, passphrase, False)

    def browse(self) -> None:
        """Choose a store file; locks the open one, since the other needs its own key."""
        path = self.hub.ask(lambda p: p.open_path(str(_existing(stores_folder()))))
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

        def work(_: TaskContext) -> Opened:
            store = Store.open(path, passphrase=passphrase or None)
            if not (remember and passphrase):
                return Opened(store)
            try:
                store.remember_key()
            except KeyUnavailable as error:
                # The passphrase was right: open the store, and say the key was not kept.
                return Opened(store, "Not remembered", f"The store is open, but {_lower(error)}")
            except BaseException:
                store.close()
                raise
            return Opened(store)

        def failed(message: str) -> None:
            self._unlock_failed(_unechoed(message, passphrase))

        self.hub.tasks.run(work, self._opened, failed)

    # ---- a new store ---------------------------------------------------------------------

    def new_store(self) -> None:
        """File > New store…: where (a save dialog in the data folder), then the passphrase;
        a missing folder is created only when the person says so."""
        self.probe.check()  # the passphrase dialog offers "Remember" only if a keyring works
        folder = stores_folder()
        if not folder.is_dir():
            if self._ask_to_create(folder):
                try:
                    folder.mkdir(parents=True, exist_ok=True)
                except OSError as error:
                    self.hub.fail(f"Cannot create the folder {folder} ({error.strerror}).")
                    return
            else:
                folder = _existing(folder)
        path = self.hub.ask(lambda p: p.new_store_path(str(folder)))
        if not path:
            return
        target = Path(path)
        if target.exists():
            self.hub.fail(f"A store already exists at {target}; open it instead.")
            return
        create_folders = not target.parent.is_dir()
        if create_folders and not self._ask_to_create(target.parent):
            self.hub.fail(f"No store was created: the folder {target.parent} does not exist.")
            return
        secret = self.hub.ask(lambda p: p.new_store_secret(path, self.probe))
        if secret is None:
            return
        self._create(path, secret, create_folders)

    def _ask_to_create(self, folder: Path) -> bool:
        return bool(
            self.hub.ask(
                lambda p: p.question(
                    "Create folder?",
                    f"The folder {folder} does not exist yet. Create it for the new store?",
                    "Create folder",
                )
            )
        )

    def _create(self, path: str, secret: NewStoreSecret, create_folders: bool) -> None:
        self._working("Creating the store…")

        def work(_: TaskContext) -> Opened:
            store = Store.create(
                path,
                passphrase=secret.passphrase,
                use_keyring=secret.remember,
                create_folders=create_folders,
            )
            where = store.url.removeprefix("sqlite:///")
            kept = (
                "Its key is also remembered on this computer."
                if store.info.keyring_backend
                else "It opens with its passphrase only."
                + (" The keyring could not keep its key." if secret.remember else "")
            )
            return Opened(
                store,
                "Store created",
                f"Created a new, empty store at {where}. {kept} Keep the passphrase safe: "
                "nobody can open the store without it. Add a person to begin.",
                gist="Created a new, empty store. Add a person to begin.",
            )

        self.hub.tasks.run(work, self._opened, self._create_failed)

    def open_demo(self) -> None:
        """Open the demo store, building it first (through control/demo) if it is not there."""
        path = default_demo_path()
        if path.exists():
            self.w.unlock_page.set_recent(self.recent_stores(), str(path))
            self.unlock(str(path), DEMO_PASSPHRASE, False)
            return
        # The demo lives in Engram's own data folder: making it (0700, as Store.create
        # does) is ours to do, not a question for someone who just asked for the demo.
        self._working("Building the demo store…")

        def work(context: TaskContext) -> Opened:
            build_demo(str(path), passphrase=DEMO_PASSPHRASE, progress=context.progress)
            store = Store.open(str(path), passphrase=DEMO_PASSPHRASE)
            return Opened(
                store,
                "Demo store",
                f"Built the demo store at {path}: made-up people, conversations and "
                f"candidates, made the way the agent makes them. Its passphrase is "
                f"{DEMO_PASSPHRASE!r}: the demo is public sample data.",
                gist="Built and opened the demo store (its passphrase is 'demo').",
                after_first_person=True,
            )

        task = self.hub.tasks.run(work, self._opened, self._create_failed)
        task.progressed.connect(
            lambda done, total: self.w.unlock_page.message.setText(
                f"Building the demo store… conversation {done} of {total}"
            )
        )

    def _working(self, text: str) -> None:
        if self.hub.store is None:
            self.w.unlock_page.busy(True, text)
        self.hub.status(text, 60_000)

    def _create_failed(self, message: str) -> None:
        if self.hub.store is None:
            self.w.unlock_page.reset(message)
        self.hub.fail(message)

    def _unlock_failed(self, message: str) -> None:
        if self.hub.store is not None:  # File › Open the demo from an open store: it stays
            self.hub.fail(message)
            return
        self.w.unlock_page.reset(message)
        self.failed.emit(message)

    def _opened(self, opened: Opened) -> None:
        store = opened.store
        if self.hub.store is not None:  # File > New store… while another was open
            self.lock("")
        path = store.url.removeprefix("sqlite:///")
        self.set_recent_stores([path, *self.recent_stores()])
        # A store that cannot be written opened read-only: the window says so, above
        # everything and beside its name (issue 17 item 12).
        self.w.store_label.setText(f"{path} (read-only)" if store.read_only else path)
        self.w.read_only_banner.setVisible(store.read_only)
        self.w.review_banner.show_sentence(opened.review)
        self.w.unlock_page.reset("")
        self.w.show_inspector(True)
        self.w.people.setFocus()  # never the passphrase field, hidden now
        self.idle.arm()
        self.release_hook.watch(store)
        # What is alive now lives as long as the session: keep the collector off it, and
        # make no full pass until the lock (tasks.CollectorHold), so none stops the window.
        gc.collect()
        gc.freeze()
        self.hub.tasks.collector.hold_session()
        if opened.title and opened.after_first_person:
            self._say_when_a_person_opens(opened)
        self.hub.set_store(store)
        self.unlocked.emit()
        if opened.title and not opened.after_first_person:
            self._say(opened)

    def _say(self, opened: Opened) -> None:
        # The dialog says it in full; the status bar keeps the gist, short enough not to be
        # cut off under the store's path.
        self.hub.status(opened.gist or opened.title, 15_000)
        self.hub.prompts.inform(opened.title, opened.text)

    def _say_when_a_person_opens(self, opened: Opened) -> None:
        def once() -> None:
            if self.hub.store is None:  # locked first: the news is dropped with the store
                self.hub.session_changed.disconnect(once)
            elif self.hub.session is not None:
                self.hub.session_changed.disconnect(once)
                self._say(opened)

        self.hub.session_changed.connect(once)

    def lock(self, message: str = "Locked.") -> None:
        """Drop every decrypted thing and the key; the unlock page asks again."""
        hub = self.hub
        # Was this application the one in front (a dialog of ours, say)? Then the window
        # takes the focus back once its dialogs are gone: closing nested dialogs left a
        # window manager with nothing active, and what was typed next went nowhere.
        in_front = QApplication.activeWindow() is not None
        hub.prompts.close_all()  # no dialog stays above the unlock page, nor acts later
        self.idle.disarm()
        self.release_hook.watch(None)
        store = hub.store
        # Jobs stop at their next check and deliver nothing; no lock waits for them (a
        # verify of a big store would hold the window). What they still read fails once
        # the store is closed below, and is thrown away.
        hub.tasks.drop_jobs()
        hub.set_store(None)  # every panel cancels its long work and forgets what it showed
        hub.tasks.wait_interactive()  # short loads: the store closes under none of them
        if store is not None:
            store.close()
            hub.tasks.collector.release_session()  # what the session left is collected now
        w = self.w
        w.store_label.setText("")  # the status bar names neither the store nor the person
        w.read_only_banner.setVisible(False)
        w.review_banner.show_sentence("")
        w.statusBar().clearMessage()
        w.show_inspector(False)
        w.unlock_page.set_recent(self.recent_stores(), None)
        w.unlock_page.reset(message)
        if in_front:
            w.raise_()
            w.activateWindow()  # the passphrase field has the focus (reset)
        self.probe.check()  # a keyring may have come or gone meanwhile
        self.locked.emit()

    def quit(self) -> None:
        """Lock (closing every dialog), then close the window."""
        self.lock("Closed.")
        self.w.close()


def _existing(folder: Path) -> Path:
    """`folder`, or the nearest folder above it that exists (a dialog cannot start in a
    folder that is not there, and none is created without asking)."""
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return folder


def _unechoed(message: str, passphrase: str) -> str:
    """`message`, unless it would show what was typed as the passphrase (a passphrase typed
    into the Store field too, say, becomes the path an error names)."""
    if passphrase and passphrase in message:
        return (
            "The store could not be opened, and the reason is not shown because it would "
            "repeat the passphrase; check the Store field (or choose the file with Browse…) "
            "and type the passphrase again."
        )
    return message


def _minutes(seconds: float) -> str:
    minutes = seconds / 60  # may be a fraction ("0.5 minutes")
    return f"{minutes:g} minute{'' if minutes == 1 else 's'}"


def _lower(error: Exception) -> str:
    text = str(error)
    return text[:1].lower() + text[1:]
