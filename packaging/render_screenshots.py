"""Render the README's screenshots from a real window on the demo store.

Every scene at 1024x700 and 1920x1080, in the light and the dark palette, named
`<scene>-<size>[-dark].png` (main, timeline, conversation-search, candidates,
audience-preview, erasure-summary), plus the README's 1280x800 light set under its
older names (main.png, note-detail.png, …, main-dark.png, erase-dialog.png). One run does
all of it; the virtual screen must hold the largest size:
    ENGRAM_WITH_XVFB=1 bash packaging/bootstrap.sh
    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python packaging/render_screenshots.py
`--only 1024x700` renders one size; `--light` or `--dark` one palette. The first-run
scenes (welcome.png, new-store.png) and the empty store (empty-store.png) come with the
light palette.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication, QWidget

from engram.control import erase
from engram.control.demo import build_demo
from engram.control.session import PersonSession
from engram.gui import theme
from engram.gui.app import build
from engram.gui.controller import InspectorController
from engram.gui.dialogs import ReportDialog, TypedConfirmDialog
from engram.gui.main_window import MainWindow
from engram.gui.new_store_dialog import NewStoreDialog
from engram.gui.summaries import erasure_summary
from engram.model.ids import PersonId
from engram.model.scope import AudienceKind
from engram.store import crypto
from engram.store.store import Store

OUT = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
START = datetime(2026, 10, 12, 9, 0, tzinfo=UTC)
SIZES = ((1024, 700), (1920, 1080))


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


def erased_summary(store: str) -> str:
    """A real erasure of maya, on a copy of the demo store, as the inspector tells it."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "copy.engram"
        shutil.copy(store, copy)
        for suffix in (".checkpoint",):
            source = Path(store + suffix)
            if source.exists():
                shutil.copy(source, str(copy) + suffix)
        opened = Store.open(str(copy), passphrase="demo")
        try:
            session = PersonSession(opened, PersonId("maya"), "staff:dana")
            return erasure_summary(erase.erase_person(session, "maya"))
        finally:
            opened.close()


def scenes(app: QApplication, window: MainWindow, controller: InspectorController, tag: str,
           summary: str) -> None:
    """The scenes of one size and palette; `tag` ends each file name."""
    window.tabs.setCurrentIndex(0)
    settle(app, controller, 200)
    select_text(app, controller, "Prefers short answers, with the summary first.")
    shoot(window, f"main{tag}.png")
    window.tabs.setCurrentIndex(1)
    settle(app, controller)
    shoot(window, f"timeline{tag}.png")
    panel = window.conversations
    window.tabs.setCurrentWidget(panel)
    settle(app, controller, 200)
    for row in range(panel.list.count()):
        panel.list.setCurrentRow(row)
        settle(app, controller, 200)
        if "contacts_lookup" in panel.transcript.toPlainText():
            panel.query.setText("grenoble mountains")
            controller.conversations.search_conversation(
                str(panel.current()), "grenoble mountains", "relevance"
            )
            settle(app, controller, 300)
            break
    shoot(window, f"conversation-search{tag}.png")
    window.tabs.setCurrentWidget(window.candidates)
    settle(app, controller, 300)
    review = window.candidates
    for row, candidate in enumerate(review.rows):
        if candidate["sensitive"]:
            review.table.selectRow(row)
            settle(app, controller, 300)
            break
    shoot(window, f"candidates{tag}.png")
    window.audience.choose(AudienceKind.SHARED)
    window.tabs.setCurrentWidget(window.audience)
    settle(app, controller, 300)
    shoot(window, f"audience-preview{tag}.png")
    report = ReportDialog("maya was erased", summary, window)
    report.show()
    settle(app, controller, 200)
    shoot(report, f"erasure-summary{tag}.png")
    report.close()
    window.tabs.setCurrentIndex(0)
    settle(app, controller)


def readme_set(app: QApplication, window: MainWindow, controller: InspectorController) -> None:
    """The 1280x800 light shots the README has always shown, under their names."""
    window.resize(1280, 800)
    window.tabs.setCurrentIndex(0)
    settle(app, controller, 300)
    select_text(app, controller, "Prefers short answers, with the summary first.")
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
    window.tabs.setCurrentIndex(0)
    settle(app, controller)
    select_text(app, controller, "Is vegetarian.")
    source = controller.notes.detail["sources"][0] if controller.notes.detail else None
    if source:
        controller.conversations.open_turn(source["conversation"], source["turn"] or "")
        settle(app, controller, 300)
        shoot(window, "conversations.png")
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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="one size, e.g. 1024x700")
    palette = parser.add_mutually_exclusive_group()
    palette.add_argument("--dark", action="store_true", help="only the dark palette")
    palette.add_argument("--light", action="store_true", help="only the light palette")
    args = parser.parse_args()
    sizes = [s for s in SIZES if args.only in (None, f"{s[0]}x{s[1]}")]
    palettes = [d for d in (False, True) if not (args.dark and not d or args.light and d)]
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        store = str(Path(folder) / "demo.engram")
        build_demo(store, passphrase="demo", kdf=crypto.FAST_KDF_FOR_TESTS, start=START)
        summary = erased_summary(store)
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
        for dark in palettes:
            app.setPalette(theme.dark_palette() if dark else theme.light_palette(app))
            settle(app, controller)
            if not dark and args.only is None:
                readme_set(app, window, controller)
            if dark and args.only is None:
                window.resize(1280, 800)
                window.tabs.setCurrentIndex(0)
                settle(app, controller, 300)
                select_text(app, controller, "Prefers short answers, with the summary first.")
                shoot(window, "main-dark.png")
            for width, height in sizes:
                window.resize(width, height)
                settle(app, controller, 300)
                scenes(app, window, controller, f"-{width}x{height}{'-dark' if dark else ''}",
                       summary)
        controller.lock("Closed.")
        if not args.dark:
            window.resize(1280, 800)
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
