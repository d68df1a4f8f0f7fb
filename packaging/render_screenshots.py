"""Render the README's screenshots from a real window on the demo store.

Run under a virtual display at 1280x800 (the light and the dark palette):
    ENGRAM_WITH_XVFB=1 bash packaging/bootstrap.sh
    xvfb-run -a -s "-screen 0 1280x800x24" .venv/bin/python packaging/render_screenshots.py
    ENGRAM_THEME=dark xvfb-run -a -s "-screen 0 1280x800x24" \
        .venv/bin/python packaging/render_screenshots.py --dark
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication, QWidget

from engram.control.demo import build_demo
from engram.gui.app import build
from engram.gui.controller import InspectorController
from engram.gui.dialogs import TypedConfirmDialog
from engram.gui.new_store_dialog import NewStoreDialog
from engram.model.scope import AudienceKind
from engram.store import crypto
from engram.store.store import Store

OUT = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
START = datetime(2026, 10, 12, 9, 0, tzinfo=UTC)


def settle(app: QApplication, controller: InspectorController, extra_ms: int = 150) -> None:
    """Let background tasks finish and the window repaint."""
    deadline = time.monotonic() + 20
    while controller.tasks.busy and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    end = time.monotonic() + extra_ms / 1000
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def shoot(widget: QWidget, name: str) -> None:
    """Save a PNG of a widget."""
    path = OUT / name
    widget.grab().save(str(path))
    print(f"wrote {path.relative_to(OUT.parents[1])}")


def select_text(app: QApplication, controller: InspectorController, text: str) -> None:
    model = controller.w.notes_model
    for row in range(model.rowCount()):
        if model.index(row, 0).data() == text:
            controller.w.table.selectRow(row)
            settle(app, controller)
            return
    raise SystemExit(f"no note {text!r} on screen")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dark", action="store_true", help="only the dark-palette shot")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        store = str(Path(folder) / "demo.engram")
        build_demo(store, passphrase="demo", kdf=crypto.FAST_KDF_FOR_TESTS, start=START)
        QCoreApplication.setOrganizationName("EngramScreenshots")
        app, window, controller = build(actor="staff:dana")
        window.resize(1280, 800)
        window.show()
        if not args.dark:
            first_run_scenes(app, window, controller, Path(folder))
        window.unlock_page.set_recent([], store)
        settle(app, controller)
        if not args.dark:
            shoot(window, "unlock.png")
        controller.unlock(store, "demo", False)
        settle(app, controller, 400)
        people = window.people
        people.setCurrentRow(
            next(r for r in range(people.count()) if people.item(r).text().startswith("maya"))
        )
        settle(app, controller, 400)
        select_text(app, controller, "Prefers short answers, with the summary first.")
        if args.dark:
            shoot(window, "main-dark.png")
            return 0
        shoot(window, "main.png")
        select_text(app, controller, "Is vegetarian.")
        shoot(window.detail, "note-detail.png")
        window.tabs.setCurrentIndex(1)
        settle(app, controller)
        shoot(window, "timeline.png")
        window.audience.choose(AudienceKind.SHARED)
        window.tabs.setCurrentWidget(window.audience)
        settle(app, controller, 300)
        shoot(window, "audience-preview.png")
        source = controller.notes.detail["sources"][0] if controller.notes.detail else None
        if source:
            controller.conversations.open_turn(source["conversation"], source["turn"] or "")
            settle(app, controller, 300)
            shoot(window, "conversations.png")
        panel = window.conversations
        for row in range(panel.list.count()):
            panel.list.setCurrentRow(row)
            settle(app, controller, 200)
            if "contacts_lookup" in panel.transcript.toPlainText():
                panel.query.setText("grenoble mountains")
                controller.conversations.search_conversation(
                    str(panel.current()), "grenoble mountains", "relevance"
                )
                settle(app, controller, 300)
                shoot(window, "conversation-search.png")
                break
        window.tabs.setCurrentWidget(window.candidates)
        settle(app, controller, 300)
        review = window.candidates
        for row, candidate in enumerate(review.rows):
            if candidate["sensitive"]:
                review.table.selectRow(row)
                settle(app, controller, 300)
                break
        shoot(window, "candidates.png")
        dialog = TypedConfirmDialog(
            "Erase person",
            "<p>This erases <b>everything kept about maya</b>: every note and version, the "
            "journal, digest lines, usage records, their keys, the conversations only they "
            "could read, and their own words in shared conversations.</p><p>It cannot be "
            "undone. Only a record without any content stays.</p>",
            "maya",
            "Erase everything",
            window,
        )
        dialog.show()
        dialog.field.setText("may")
        settle(app, controller, 200)
        shoot(dialog, "erase-dialog.png")
        dialog.close()
        controller.lock("Closed.")
        empty_store_scene(app, window, controller, Path(folder))
    return 0


def first_run_scenes(
    app: QApplication, window: QWidget, controller: InspectorController, folder: Path
) -> None:
    """The welcome (no recent stores) and the new-store dialog (issue 8, items 9 and 10)."""
    controller.w.unlock_page.set_recent([], None)
    settle(app, controller)
    shoot(window, "welcome.png")
    dialog = NewStoreDialog(str(folder / "my-store.engram"), controller.store_lock.probe, window)
    dialog.show()
    dialog.passphrase.setText("quiet lantern orbit mosaic")
    dialog.again.setText("quiet lantern orbit")
    settle(app, controller, 200)
    shoot(dialog, "new-store.png")
    dialog.close()


def empty_store_scene(
    app: QApplication, window: QWidget, controller: InspectorController, folder: Path
) -> None:
    """A new, empty store offers Add person (issue 8, item 11)."""
    empty = folder / "empty.engram"
    Store.create(str(empty), passphrase="demo", kdf=crypto.FAST_KDF_FOR_TESTS).close()
    controller.unlock(str(empty), "demo", False)
    settle(app, controller, 400)
    shoot(window, "empty-store.png")
    controller.lock("Closed.")


if __name__ == "__main__":
    sys.exit(main())
