"""File › Change passphrase… and File › Forget the key on this computer… (issue 20 item 7).

Both ask through the dialog host (a lock closes their dialogs, and an answer that arrives
after a lock is dropped) and run control/passphrase.py off the UI thread: the same
strength floor and the same one transaction as the command line's.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from engram.control import passphrase
from engram.gui.controllers.hub import Hub
from engram.gui.widgets import READ_ONLY_REASON
from engram.store.location import describe

NO_PASSPHRASE_TO_FALL_BACK_ON = (
    "This store has no passphrase, so the key on this computer is the only way to open it; "
    "give it a passphrase first (File › Set a passphrase…)."
)


class StoreKeyController(QObject):
    """The store's passphrase and its key in this computer's keyring."""

    done = Signal(str)  # what was done, in one sentence (tests wait on it)

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.hub = hub
        w = hub.w
        w.change_passphrase_action.triggered.connect(self.change_passphrase)
        w.forget_key_action.triggered.connect(self.forget_key)
        hub.session_changed.connect(self._offer)
        self._offer()

    def _offer(self) -> None:
        """Enabled while a store is open; each says in its tooltip why it is not."""
        w, store = self.hub.w, self.hub.store
        has_passphrase = store is not None and store.info.kek_by_passphrase is not None
        change, forget = w.change_passphrase_action, w.forget_key_action
        change.setText(
            "Change &passphrase…" if has_passphrase or store is None else "Set a &passphrase…"
        )
        change.setEnabled(store is not None and not store.read_only)
        change.setToolTip(
            READ_ONLY_REASON
            if store is not None and store.read_only
            else "Seal the store's key under a new passphrase; the old one stops opening it."
        )
        forget.setEnabled(has_passphrase)
        forget.setToolTip(
            "Remove the store's key from this computer's keyring; then only the passphrase "
            "opens it."
            if store is None or has_passphrase
            else NO_PASSPHRASE_TO_FALL_BACK_ON
        )

    def change_passphrase(self) -> None:
        """Ask for the new passphrase (twice, with the strength meter), then rewrap."""
        store = self.hub.store
        if store is None:
            return
        if store.read_only:
            self.hub.fail(READ_ONLY_REASON)
            return
        had = store.info.kek_by_passphrase is not None
        where = describe(store.url)
        new = self.hub.ask(
            lambda p: p.new_passphrase(where, had), "the passphrase was not changed."
        )
        if not new:
            return
        self.hub.status("Changing the passphrase…", 60_000)
        self.hub.run(
            lambda _: passphrase.change_passphrase(store, new),
            lambda said: self._said("Passphrase changed" if had else "Passphrase set", said),
            store_wide=True,
        )

    def forget_key(self) -> None:
        """Ask for the passphrase (the only key afterwards), then remove the keyring's."""
        store = self.hub.store
        if store is None:
            return
        if store.info.kek_by_passphrase is None:
            self.hub.fail(NO_PASSPHRASE_TO_FALL_BACK_ON)
            return
        where = describe(store.url)
        typed = self.hub.ask(
            lambda p: p.forget_key_passphrase(where), "the key was kept on this computer."
        )
        if not typed:
            return
        self.hub.status("Forgetting the key…", 60_000)
        self.hub.run(
            lambda _: passphrase.forget_key(store, typed),
            lambda said: self._said("Key forgotten", said),
            store_wide=True,
        )

    def _said(self, title: str, said: str) -> None:
        self._offer()
        self.hub.status(said, 15_000)
        self.hub.prompts.inform(title, said)
        self.done.emit(said)
