"""File › Open recent (issue 20 item 12): the stores opened before, newest first (at most
RECENT_STORES, kept in QSettings by the store controller). A store whose file is gone is
greyed out with the reason; "Remove missing stores" drops those, "Clear the list" all.
Choosing one puts it on the unlock page, ready for its passphrase, as Open store… does."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction

from engram.gui.controllers.store_lock import StoreLockController


def is_missing(path: str) -> bool:
    """Whether a recent store's file is gone (a database URL is never "missing" here)."""
    return "://" not in path and not Path(path).expanduser().exists()


class RecentStoresMenu(QObject):
    """Builds File › Open recent each time it opens."""

    def __init__(self, store_lock: StoreLockController) -> None:
        super().__init__(store_lock)
        self.store_lock = store_lock
        self.menu = store_lock.w.open_recent_menu
        self.menu.aboutToShow.connect(self.rebuild)
        self.rebuild()

    def rebuild(self) -> None:
        """One entry per recent store, then the two ways to tidy the list."""
        menu, recent = self.menu, self.store_lock.recent_stores()
        menu.clear()
        missing = [path for path in recent if is_missing(path)]
        for index, path in enumerate(recent):
            shown = path.replace("&", "&&")  # a "&" in a path is not a mnemonic
            action = QAction(f"&{index + 1} {shown}" if index < 9 else shown, menu)
            action.setData(path)
            if path in missing:
                action.setText(f"{shown} (not found)")
                action.setEnabled(False)
                action.setToolTip(f"There is no store at {path} any more.")
            else:
                action.setToolTip(path)
                action.triggered.connect(lambda _c=False, p=path: self.store_lock.choose(p))
            menu.addAction(action)
        if not recent:
            empty = menu.addAction("No recent stores")
            empty.setEnabled(False)
        menu.addSeparator()
        prune = menu.addAction("Remove &missing stores")
        prune.setEnabled(bool(missing))
        prune.triggered.connect(lambda: self._keep([p for p in recent if p not in missing]))
        clear = menu.addAction("&Clear the list")
        clear.setEnabled(bool(recent))
        clear.triggered.connect(lambda: self._keep([]))

    def _keep(self, paths: list[str]) -> None:
        self.store_lock.set_recent_stores(paths)
        self.rebuild()
