"""One window per store (issue 20 item 12): a second `engram desk STORE` (a double-click in
the file manager, the menu entry) asks the window that has STORE to come to the front, and
exits 0.

The window listens on a local socket named after a hash of the store's resolved path, in
the user's runtime folder ($XDG_RUNTIME_DIR, else the temporary folder with the user id in
the name), reachable by this user only. A socket file a crashed window left behind answers
nobody: it is removed and taken over. When the window opens another store it moves to that
store's name.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket
from PySide6.QtWidgets import QWidget

CONNECT_MS = 1000
REPLY_MS = 3000
RAISE = b"raise\n"
RAISED = b"raised\n"


def store_key(store: str) -> str:
    """The same key for every spelling of one store (relative, ~, a symlink); a database
    URL stands for itself."""
    where = store if "://" in store else str(Path(store).expanduser().resolve())
    return hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def socket_name(store: str) -> str:
    """The full path of the store's socket."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        return str(Path(runtime) / f"engram-desk-{store_key(store)}")
    return str(Path(tempfile.gettempdir()) / f"engram-desk-{os.getuid()}-{store_key(store)}")


def ask_to_raise(store: str) -> bool:
    """Whether a window that has `store` answered and came to the front."""
    socket = QLocalSocket()
    socket.connectToServer(socket_name(store))
    if not socket.waitForConnected(CONNECT_MS):
        return False
    socket.write(RAISE)
    socket.flush()
    answered = b""
    while RAISED not in answered and socket.waitForReadyRead(REPLY_MS):
        answered += bytes(socket.readAll().data())
    socket.disconnectFromServer()
    return RAISED in answered


def _answers(name: str) -> bool:
    socket = QLocalSocket()
    socket.connectToServer(name)
    alive = socket.waitForConnected(CONNECT_MS)
    socket.abort()
    return alive


class StoreWindowServer(QObject):
    """Listens for later `engram desk` runs on the window's store and raises the window."""

    raised = Signal()

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._answer)
        self.store: str | None = None

    def serve(self, store: str) -> bool:
        """Listen under `store`'s name (leaving the previous one); False when another live
        window already has it."""
        if self.store is not None and store_key(store) == store_key(self.store):
            return True
        name = socket_name(store)
        self.server.close()
        self.store = None
        # Asked first: with access options Qt binds beside the name and renames over it,
        # which would silently take a live window's name.
        if _answers(name):
            return False  # another window has it; this one stays unnamed
        QLocalServer.removeServer(name)  # a socket file left by a window that crashed
        if not self.server.listen(name):
            return False
        self.store = store
        return True

    def close(self) -> None:
        """Stop listening (the socket file goes)."""
        self.server.close()
        self.store = None

    def _answer(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(socket.deleteLater)

    def _read(self, socket: QLocalSocket) -> None:
        if RAISE not in bytes(socket.readAll().data()):
            return
        window = self.window
        if window.isMinimized():
            window.showNormal()
        window.show()
        window.raise_()
        window.activateWindow()
        socket.write(RAISED)
        socket.flush()
        self.raised.emit()
