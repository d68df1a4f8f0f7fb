"""Render the screenshots in docs/screenshots/ from the real window on the demo store.

Window scenes, at 1024x700 and 1920x1080, in the light and the dark palette, are named
`<scene>-<size>[-dark].png`: welcome (first run, no recent stores), empty-store, main,
as-of (time travel: the banner, the note as it stood, edits off), undo (right after
Ctrl+Z), timeline, conversation-search, candidates, audience-preview, audit-workspace (the
audit log narrowed to one staff member), jobs-strip (a verify
in the status bar's jobs strip while the notes stay usable). Dialogs keep their
own size and are named `<dialog>[-dark].png`: new-store, what-the-agent-saw,
agent-settings, bulk-preview (Forget everything about "garden"), erasure-summary,
erase-dialog; note-detail[-dark].png is the detail pane at 1920x1080.
access-report-page1.png and access-report-page2.png are the first two pages (the summary;
how to ask for a correction or an erasure) of an access report written by the inspector's
own code (File > Save access report…) and rendered with QtPdf.

One run renders everything; the virtual screen must hold the largest size. Run it from a
scratch folder, so nothing lands in the checkout:
    ENGRAM_WITH_XVFB=1 bash packaging/bootstrap.sh
    cd "$(mktemp -d)" && xvfb-run -a -s "-screen 0 1920x1080x24" \\
        /path/to/engram/.venv/bin/python /path/to/engram/packaging/render_screenshots.py
`--only 1024x700` renders one size; `--light` or `--dark` one palette.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from PySide6.QtCore import QDateTime, QRect, QSettings, QSize, QTimeZone
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication, QDialog, QWidget

from engram.control import access_report_file, bulk_notes, erase, turn_block
from engram.control.bulk_notes import BulkAction
from engram.control.demo import build_demo
from engram.control.session import PersonSession
from engram.gui import theme
from engram.gui.agent_settings_dialog import AGENT_ROLE
from engram.gui.app import build
from engram.gui.bulk_dialog import BulkPreviewDialog
from engram.gui.controller import InspectorController
from engram.gui.conversations_panel import CONVERSATION_ROLE
from engram.gui.dialogs import ReportDialog, TypedConfirmDialog
from engram.gui.main_window import MainWindow
from engram.gui.new_store_dialog import NewStoreDialog
from engram.gui.summaries import erasure_summary
from engram.gui.turn_sight_dialog import TurnSightDialog
from engram.model.conversation import EntryKind
from engram.model.ids import ConversationId, PersonId, TurnId
from engram.model.scope import AudienceKind
from engram.runtime.conversations import conversations_of, turns
from engram.store import crypto
from engram.store.store import Store

OUT = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
START = datetime(2026, 10, 12, 9, 0, tzinfo=UTC)
SIZES = ((1024, 700), (1920, 1080))
PASSPHRASE = "demo"
MAYA = "maya"
REPORT_DPI = 110  # the report's page as a PNG: readable, not huge


@dataclass
class Shots:
    """Where the window is, and what one run has written."""

    app: QApplication
    window: MainWindow
    controller: InspectorController
    folder: Path
    written: list[Path]

    def settle(self, extra_ms: int = 150) -> None:
        """Let background tasks finish and the window repaint."""
        deadline = time.monotonic() + 30
        while self.controller.tasks.busy and time.monotonic() < deadline:
            self.app.processEvents()
            time.sleep(0.01)
        end = time.monotonic() + extra_ms / 1000
        while time.monotonic() < end:
            self.app.processEvents()
            time.sleep(0.01)

    def shoot(self, widget: QWidget, name: str) -> None:
        """Save a PNG of a widget as it is on screen."""
        self.save(widget.grab().toImage(), name)

    def save(self, image: QImage, name: str) -> None:
        path = OUT / name
        if not image.save(str(path), "PNG"):
            raise SystemExit(f"could not write {path}")
        self.written.append(path)
        print(f"wrote docs/screenshots/{name}")


class Answering:
    """The window's own dialog host, except for the questions a scene answers itself (a
    modal dialog would wait for a person)."""

    def __init__(self, real: Any, **answers: Any) -> None:
        self._real = real
        self._answers = answers

    def __getattr__(self, name: str) -> Any:
        if name in self._answers:
            return lambda *_args, **_kwargs: self._answers[name]
        return getattr(self._real, name)


def select_text(shots: Shots, text: str) -> None:
    """Select the notes table's row with this text."""
    model = shots.window.notes_model
    for row in range(model.rowCount()):
        if model.index(row, 0).data() == text:
            shots.window.table.selectRow(row)
            shots.settle()
            return
    raise SystemExit(f"no note {text!r} on screen")


def erased_summary(store: str) -> str:
    """A real erasure of maya, on a copy of the demo store, as the inspector tells it."""
    with tempfile.TemporaryDirectory() as folder:
        copy = copy_store(store, Path(folder) / "copy.engram")
        opened = Store.open(str(copy), passphrase=PASSPHRASE)
        try:
            session = PersonSession(opened, PersonId(MAYA), "staff:dana")
            return erasure_summary(erase.erase_person(session, MAYA))
        finally:
            opened.close()


def copy_store(store: str, target: Path) -> Path:
    """A copy of a store with its checkpoint file."""
    shutil.copy(store, target)
    checkpoint = Path(store + ".checkpoint")
    if checkpoint.exists():
        shutil.copy(checkpoint, str(target) + ".checkpoint")
    return target


def round_folder(shots: Shots, tag: str) -> Path:
    """A folder of one size and palette's own (the status bar shows a store's path)."""
    folder = shots.folder / tag.strip("-")
    folder.mkdir(exist_ok=True)
    return folder


def show_dialog(shots: Shots, dialog: QDialog, name: str, wait_ms: int = 200) -> None:
    """Show a dialog beside the window (not modal: nobody answers it), shoot it, close it."""
    dialog.show()
    shots.settle(wait_ms)
    shots.shoot(dialog, name)
    dialog.close()
    dialog.deleteLater()


# ---- the scenes -----------------------------------------------------------------------


def welcome(shots: Shots, tag: str) -> None:
    """First run: no recent stores; open, create, or the demo (issue 8, item 10)."""
    shots.window.unlock_page.reset()  # no "Closed." from the scene before: a first run
    shots.window.unlock_page.set_recent([], None)
    shots.settle(200)
    shots.shoot(shots.window, f"welcome{tag}.png")


def new_store(shots: Shots, dark: str) -> None:
    """File > New store…: the passphrase twice, its strength, the keyring (item 9)."""
    dialog = NewStoreDialog(
        str(shots.folder / "my-store.engram"), shots.controller.store_lock.probe, shots.window
    )
    dialog.passphrase.setText("quiet lantern orbit mosaic")
    dialog.again.setText("quiet lantern orbit")
    show_dialog(shots, dialog, f"new-store{dark}.png", 400)


def empty_store(shots: Shots, tag: str) -> None:
    """A new, empty store offers Add person (item 11)."""
    empty = round_folder(shots, tag) / "empty.engram"
    Store.create(str(empty), passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS).close()
    shots.controller.unlock(str(empty), PASSPHRASE, False)
    shots.settle(400)
    shots.shoot(shots.window, f"empty-store{tag}.png")
    shots.controller.lock("Closed.")
    shots.settle()


def open_maya(shots: Shots, store: Path) -> None:
    shots.controller.unlock(str(store), PASSPHRASE, False)
    shots.settle(400)
    people = shots.window.people
    row = next(r for r in range(people.count()) if people.item(r).text().startswith(MAYA))
    if people.currentRow() != row:
        people.setCurrentRow(row)
    shots.settle(400)


def main_view(shots: Shots, tag: str) -> None:
    shots.window.tabs.setCurrentIndex(0)
    shots.settle(200)
    select_text(shots, "Prefers short answers, with the summary first.")
    shots.shoot(shots.window, f"main{tag}.png")


def as_of(shots: Shots, tag: str) -> None:
    """Time travel to a day before Maya moved: the banner, "Lives in Lyon." as it stood
    then, and every edit action off (item 6)."""
    window, notes = shots.window, shots.controller.notes
    window.tabs.setCurrentIndex(0)
    select_text(shots, "Lives in Grenoble.")
    detail = notes.detail
    assert detail is not None
    moved = datetime.fromisoformat(detail["valid_from"])
    then = QDateTime(moved - timedelta(days=1)).toTimeZone(QTimeZone.utc())
    window.filters.moment.setDateTime(then)
    window.filters.time_travel.setChecked(True)
    shots.settle(300)
    select_text(shots, "Lives in Lyon.")
    assert not window.edit_action.isEnabled() and not window.detail.edit_button.isEnabled()
    shots.shoot(window, f"as-of{tag}.png")
    window.time_travel_banner.now_button.click()
    shots.settle(300)


def undo(shots: Shots, tag: str) -> None:
    """Edit a note, then Ctrl+Z: the note holds its old text again, the status bar says
    so, and the audit log shows both steps (item 18)."""
    window, controller = shots.window, shots.controller
    window.tabs.setCurrentIndex(0)
    select_text(shots, "Lives in Grenoble.")
    real = controller.hub.prompts
    controller.hub.prompts = Answering(real, edit_text="Lives in Chambéry.")
    try:
        window.edit_action.trigger()
        shots.settle(300)
    finally:
        controller.hub.prompts = real
    assert window.undo_action.isEnabled(), "nothing to undo after the edit"
    window.undo_action.trigger()
    shots.settle(300)
    window.tabs.setCurrentWidget(window.audit)
    shots.settle(400)
    shots.shoot(window, f"undo{tag}.png")
    window.tabs.setCurrentIndex(0)
    shots.settle()


def timeline(shots: Shots, tag: str) -> None:
    shots.window.tabs.setCurrentWidget(shots.window.timeline_tab)
    shots.settle()
    shots.shoot(shots.window, f"timeline{tag}.png")


def audit_workspace(shots: Shots, tag: str) -> None:
    """The audit tab narrowed to one staff member's entries (issue 21 item 5)."""
    window = shots.window
    log = window.audit.log
    window.tabs.setCurrentWidget(window.audit)
    shots.settle(400)
    log.actor.setCurrentIndex(max(0, log.actor.findData("staff:dana")))
    shots.settle(400)
    shots.shoot(window, f"audit-workspace{tag}.png")
    log.actor.setCurrentIndex(0)
    shots.settle(300)


def conversation_search(shots: Shots, tag: str) -> None:
    window, controller = shots.window, shots.controller
    panel = window.conversations
    window.tabs.setCurrentWidget(panel)
    shots.settle(200)
    for row in range(panel.list.count()):
        panel.list.setCurrentRow(row)
        shots.settle(200)
        if "contacts_lookup" in panel.transcript.toPlainText():
            panel.query.setText("grenoble mountains")
            controller.conversations.search_conversation(
                str(panel.current()), "grenoble mountains", "relevance"
            )
            shots.settle(300)
            break
    shots.shoot(window, f"conversation-search{tag}.png")


def agent_saw(shots: Shots, dark: str) -> None:
    """ "What did the agent see?" for the reply to "What should I cook tonight?" (item 19):
    the transcript is opened as a person would, and the dialog the link opens is shown."""
    window, controller = shots.window, shots.controller
    session = controller.session
    assert session is not None
    conversation, reply = answered_turn(session.store, "What should I cook tonight?")
    panel = window.conversations
    window.tabs.setCurrentWidget(panel)
    shots.settle(200)
    row = next(
        r
        for r in range(panel.list.count())
        if panel.list.item(r).data(CONVERSATION_ROLE) == conversation
    )
    panel.list.setCurrentRow(row)
    shots.settle(300)
    sight = turn_block.turn_sight(session, ConversationId(conversation), TurnId(reply))
    show_dialog(shots, TurnSightDialog(sight, window), f"what-the-agent-saw{dark}.png", 300)


def bulk_preview(shots: Shots, dark: str) -> None:
    """Note › Forget everything about… "garden" (issue 21 item 7): the notes it would
    forget, each to untick, before anything is written (Cancel is the default)."""
    session = shots.controller.session
    assert session is not None
    shown = bulk_notes.about(session, "garden", BulkAction.FORGET)
    show_dialog(shots, BulkPreviewDialog(shown, shots.window), f"bulk-preview{dark}.png")


def agent_settings(shots: Shots, dark: str) -> None:
    """Edit › Agent settings… on the demo's coach (issue 21 item 9): its learning mode,
    surfaces, kinds and tools, what each lets it do, and its history."""
    controller = shots.controller
    shots.window.agent_settings_action.trigger()
    shots.settle(600)
    dialog = controller.agent_settings.dialog
    assert dialog is not None
    for row in range(dialog.agents.count()):
        if dialog.agents.item(row).data(AGENT_ROLE) == "coach":
            dialog.agents.setCurrentRow(row)
    shots.settle(600)
    shots.shoot(dialog, f"agent-settings{dark}.png")
    controller.agent_settings.close()
    shots.settle(100)


def answered_turn(store: Store, first_words: str) -> tuple[str, str]:
    """The demo conversation that starts with `first_words`, and its assistant turn."""
    for info in conversations_of(store, MAYA):
        said = turns(store, info.id)
        if said and (said[0][1] or "").startswith(first_words):
            reply = next(e.ref for e, _ in said if e.kind is EntryKind.ASSISTANT)
            assert reply is not None
            return info.id, reply
    raise SystemExit(f"no demo conversation starts with {first_words!r}")


def candidates(shots: Shots, tag: str) -> None:
    window = shots.window
    window.tabs.setCurrentWidget(window.candidates)
    shots.settle(300)
    review = window.candidates
    for row, candidate in enumerate(review.rows):
        if candidate["sensitive"]:
            review.table.selectRow(row)
            shots.settle(300)
            break
    shots.shoot(window, f"candidates{tag}.png")


def audience_preview(shots: Shots, tag: str) -> None:
    window = shots.window
    window.audience.choose(AudienceKind.SHARED)
    window.tabs.setCurrentWidget(window.audience)
    shots.settle(300)
    shots.shoot(window, f"audience-preview{tag}.png")


def note_detail(shots: Shots, dark: str) -> None:
    """The detail pane alone: versions, provenance, the confidence arithmetic."""
    shots.window.tabs.setCurrentIndex(0)
    select_text(shots, "Is vegetarian.")
    shots.settle(200)
    detail = shots.window.detail
    # Down to where its page ends: the pane is as tall as the window, the page is not.
    page = detail.browser
    bottom = page.mapTo(detail, page.rect().topLeft()).y() + int(page.document().size().height())
    height = min(detail.height(), bottom + 24)
    shots.save(detail.grab(QRect(0, 0, detail.width(), height)).toImage(), f"note-detail{dark}.png")


def jobs_strip(shots: Shots, tag: str) -> None:
    """The real Verify from the Person menu, in the jobs strip with its progress and
    Cancel, while the notes stay usable. The demo verifies in milliseconds, so the rig
    holds the real verify open at its end until the picture is taken."""
    from engram.control import forensics

    window = shots.window
    window.tabs.setCurrentIndex(0)
    release = threading.Event()
    real = forensics.verify_store

    def held(store: Any, progress: Any = None, cancelled: Any = None) -> Any:
        report = real(store, progress, cancelled)
        if progress is not None:
            progress(7, 9)  # where the bar stands in the picture: most chains walked
        release.wait(10)
        return report

    forensics.verify_store = held  # type: ignore[assignment]
    try:
        window.verify_action.trigger()
        window.tabs.setCurrentIndex(0)  # Verify shows the Audit tab; the person goes back
        model = window.notes_model  # a row chosen while the job runs (no settle: it waits)
        rows = [
            r for r in range(model.rowCount()) if model.index(r, 0).data() == "Lives in Grenoble."
        ]
        window.table.selectRow(rows[0])
        end = time.monotonic() + 1.0  # the strip shows a job after 300 ms; the detail comes
        while time.monotonic() < end:
            shots.app.processEvents()
            time.sleep(0.01)
        shots.shoot(window, f"jobs-strip{tag}.png")
    finally:
        release.set()
        forensics.verify_store = real  # type: ignore[assignment]
    shots.settle(300)


def erasure_dialogs(shots: Shots, dark: str, summary: str) -> None:
    """The typed confirmation an erasure needs, and the summary it ends with."""
    dialog = TypedConfirmDialog(
        "Erase person",
        "<p>This erases <b>everything kept about maya</b>: every note and version, the "
        "journal, digest lines, usage records, their keys, the conversations only they "
        "could read, and their own words in shared conversations.</p><p>It cannot be "
        "undone. Only a record without any content stays.</p>",
        MAYA,
        "Erase everything",
        shots.window,
    )
    dialog.field.setText("may")
    show_dialog(shots, dialog, f"erase-dialog{dark}.png")
    report = ReportDialog(  # only pictured: Save… is never pressed here
        "maya was erased", summary, shots.window, ask_path=lambda _: None, fail=lambda _: None
    )
    show_dialog(shots, report, f"erasure-summary{dark}.png")


def access_report_page(shots: Shots) -> None:
    """Pages 1 and 2 of Maya's access report, written as File > Save access report…
    writes it (off the UI thread), rendered with QtPdf."""
    try:
        from PySide6.QtPdf import QPdfDocument
    except ImportError:
        raise SystemExit(
            "QtPdf is missing: install it with 'ENGRAM_WITH_XVFB=1 bash packaging/bootstrap.sh'."
        ) from None
    session = shots.controller.session
    assert session is not None
    target = shots.folder / "maya-access-report.pdf"
    written: list[Path | None] = []
    shots.controller.tasks.run(
        lambda ctx: access_report_file.save_access_report(
            session, str(target), ctx.progress, ctx.cancelled
        ),
        written.append,
    )
    shots.settle()
    if written != [target]:
        raise SystemExit("the access report was not written")
    document = QPdfDocument(None)
    document.load(str(target))
    for index in (0, 1):
        points = document.pagePointSize(index)
        size = QSize(
            round(points.width() * REPORT_DPI / 72), round(points.height() * REPORT_DPI / 72)
        )
        page = document.render(index, size)
        sheet = QImage(size, QImage.Format.Format_RGB32)
        sheet.fill(QColor("white"))
        painter = QPainter(sheet)
        painter.drawImage(0, 0, page)
        painter.end()
        shots.save(sheet, f"access-report-page{index + 1}.png")
    document.close()


# ---- one run --------------------------------------------------------------------------


def rounds(
    shots: Shots, template: str, summary: str, sizes: list[tuple[int, int]], palettes: list[bool]
) -> None:
    """Every scene, at every size, in every palette; dialogs once per palette."""
    app, window, controller = shots.app, shots.window, shots.controller
    for dark in palettes:
        app.setPalette(theme.dark_palette() if dark else theme.light_palette(app))
        shade = "-dark" if dark else ""
        for index, (width, height) in enumerate(sizes):
            tag = f"-{width}x{height}{shade}"
            window.resize(width, height)
            shots.settle(300)
            welcome(shots, tag)
            once = index == 0  # dialogs keep their size: one of each per palette
            if once:
                new_store(shots, shade)
            store = copy_store(template, round_folder(shots, tag) / "demo.engram")
            open_maya(shots, store)
            if once:  # before the undo scene changes the store
                agent_saw(shots, shade)
                agent_settings(shots, shade)
                bulk_preview(shots, shade)
                erasure_dialogs(shots, shade, summary)
            scenes: list[Callable[[Shots, str], None]] = [
                main_view,
                as_of,
                timeline,
                conversation_search,
                candidates,
                audience_preview,
                audit_workspace,
                jobs_strip,
                undo,  # last: it changes the store
            ]
            for scene in scenes:
                scene(shots, tag)
            if (width, height) == SIZES[-1]:
                note_detail(shots, shade)
            if once and not dark:
                access_report_page(shots)
            controller.lock("Closed.")
            shots.settle()
            empty_store(shots, tag)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="one size, e.g. 1024x700")
    palette = parser.add_mutually_exclusive_group()
    palette.add_argument("--dark", action="store_true", help="only the dark palette")
    palette.add_argument("--light", action="store_true", help="only the light palette")
    args = parser.parse_args()
    sizes = [s for s in SIZES if args.only in (None, f"{s[0]}x{s[1]}")]
    if not sizes:
        raise SystemExit(f"--only takes one of {', '.join(f'{w}x{h}' for w, h in SIZES)}.")
    palettes = [False] if args.light else [True] if args.dark else [False, True]
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        # Settings (columns, recent stores, window geometry) stay in the scratch folder.
        QSettings.setPath(QSettings.Format.NativeFormat, QSettings.Scope.UserScope, scratch)
        template = str(folder / "demo-template.engram")
        build_demo(template, passphrase=PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS, start=START)
        summary = erased_summary(template)
        app, window, controller = build(actor="staff:dana")
        window.move(0, 0)
        window.show()
        shots = Shots(app, window, controller, folder, [])
        shots.settle()
        rounds(shots, template, summary, sizes, palettes)
        window.close()
    print(f"{len(shots.written)} screenshots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
