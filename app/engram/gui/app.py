"""`engram desk`: start the inspector (cli/no_display.py speaks when there is no display)."""

from __future__ import annotations

import sys

from PySide6.QtCore import QCoreApplication, QSettings
from PySide6.QtWidgets import QApplication

from engram.gui.about import app_icon
from engram.gui.controller import InspectorController
from engram.gui.main_window import APP_NAME, MainWindow
from engram.gui.resources import APP_ID
from engram.gui.single_instance import StoreWindowServer, ask_to_raise
from engram.gui.theme import apply_theme

JOBS_STOP_MS = 3000  # how long quitting waits for dropped jobs to stop


_ALREADY_OPEN = "Engram Inspector already has {store} open; its window was brought to the front.\n"
# Said on standard output each time a store is unlocked: a script that started the window
# (packaging/smoke_bundle.sh) knows from it that the store opened, not merely that the
# process is still alive (issue 20 item 15).
UNLOCKED = "Engram Inspector unlocked {store}.\n"


def build(actor: str | None = None) -> tuple[QApplication, MainWindow, InspectorController]:
    """The application, its window and controller (tests and `engram desk` share this)."""
    QCoreApplication.setOrganizationName("Engram")
    QCoreApplication.setApplicationName(APP_NAME)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(app_icon())  # every window and dialog, the About box too
    apply_theme(app)
    window = MainWindow()
    settings = QSettings()
    geometry = settings.value("window/geometry")
    if geometry is not None:
        window.restoreGeometry(geometry)
    panes = settings.value("window/panes")
    if panes is not None:
        window.splitter.restoreState(panes)
    controller = InspectorController(window, settings=settings, actor=actor)
    return app, window, controller


def run(
    store: str | None,
    passphrase: str | None,
    actor: str | None = None,
    person: str | None = None,
) -> int:
    """Open the window; with a passphrase it unlocks straight away (at `person`, if given)."""
    QApplication.instance() or QApplication(sys.argv[:1])
    if store and ask_to_raise(store):
        sys.stdout.write(_ALREADY_OPEN.format(store=store))
        return 0
    app, window, controller = build(actor)
    server = StoreWindowServer(window)
    if store and not server.serve(store) and ask_to_raise(store):  # both started at once
        sys.stdout.write(_ALREADY_OPEN.format(store=store))
        return 0
    # The window answers for the store it has open, wherever it was opened from.
    controller.unlocked.connect(
        lambda: (
            controller.store is not None
            and server.serve(controller.store.url.removeprefix("sqlite:///"))
        )
    )
    controller.unlocked.connect(lambda: _say_unlocked(controller))
    controller.people.first_person = person
    window.show()
    controller.store_lock.launch(store, passphrase)
    app.aboutToQuit.connect(lambda: _shutdown(window, controller))
    return int(app.exec())


def _say_unlocked(controller: InspectorController) -> None:
    if controller.store is not None:
        sys.stdout.write(UNLOCKED.format(store=controller.store.url.removeprefix("sqlite:///")))
        sys.stdout.flush()


def _shutdown(window: MainWindow, controller: InspectorController) -> None:
    settings = QSettings()
    settings.setValue("window/geometry", window.saveGeometry())
    settings.setValue("window/panes", window.splitter.saveState())
    controller.lock("Closed.")
    # Jobs were dropped by the lock and stop at their next check or store call; let them,
    # briefly, so none is still running Python while the interpreter shuts down.
    controller.tasks.wait(JOBS_STOP_MS)
