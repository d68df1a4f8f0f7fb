"""Issue 21 item 7 in the window: several rows selected (Shift+Down, as people select),
Delete lists them all in a preview and deletes the ones left ticked in one change; Note ›
Forget everything about… finds the notes holding a word and erases their words."""

from __future__ import annotations

import io
import sqlite3
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from engram.cli.main import main as cli_main
from tests.conftest import PASSPHRASE
from tests.gui.conftest import (
    SIGNAL_TIMEOUT,
    FakePrompts,
    Inspector,
    _inspector,
    long_job,
    note_texts,
    open_person,
    unlock,
    wait_idle,
)


def _types(path: Path) -> list[str]:
    with sqlite3.connect(path) as raw:
        rows = raw.execute("select type from journal where person='maya' order by seq")
        return [r[0] for r in rows]


def _row(inspector: Inspector, text: str) -> int:
    model = inspector.window.notes_model
    return next(r for r in range(model.rowCount()) if model.index(r, 0).data() == text)


def _three_selected(qtbot: Any, inspector: Inspector) -> tuple[int, list[str]]:
    """Select "Is vegetarian." and the two rows below it with Shift+Down, as people do;
    the first row's number and the three rows' texts."""
    table = inspector.window.table
    start = _row(inspector, "Is vegetarian.")
    with qtbot.waitSignal(inspector.controller.detail_shown, timeout=SIGNAL_TIMEOUT):
        table.selectRow(start)
    table.setFocus()
    for _ in range(2):
        qtbot.keyClick(table, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    wait_idle(qtbot, inspector)
    model = inspector.window.notes_model
    return start, [model.index(start + i, 0).data() for i in range(3)]


def test_issue21_item7_shift_select_three_rows_delete_after_a_preview(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    table = inspector.window.table
    _, chosen = _three_selected(qtbot, inspector)
    assert len(inspector.controller.notes.selected_ids()) == 3
    before = _types(demo_path)
    inspector.prompts.untick = {chosen[1]}  # left alone in the preview
    inspector.prompts.reason = "not so any more"
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(table, Qt.Key.Key_Delete)
    wait_idle(qtbot, inspector)
    name, (preview, button) = inspector.prompts.asked[-1]
    assert name == "bulk_preview" and [n.text for n in preview.notes] == chosen
    assert button == "&Delete 2 notes"
    shown = note_texts(inspector)
    assert chosen[0] not in shown and chosen[2] not in shown and chosen[1] in shown
    assert _types(demo_path)[len(before) :][:2] == ["deleted", "deleted"]

    # Ctrl+Z takes back the whole change, not only its last note.
    undo = inspector.window.undo_action
    qtbot.waitUntil(lambda: undo.text() == "Undo deletion of 2 notes", timeout=SIGNAL_TIMEOUT)
    deleted = len(_types(demo_path))
    with qtbot.waitSignal(inspector.controller.undo.undone, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    wait_idle(qtbot, inspector)
    assert set(chosen) <= set(note_texts(inspector))
    assert _types(demo_path)[deleted:] == ["undone", "undone"]
    assert "Undid the deletion of 2 notes" in inspector.window.statusBar().currentMessage()


def test_issue21_item7_a_bulk_deletion_asked_for_during_a_long_job_keeps_its_rows(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    """Delete pressed on three selected rows while a long job holds the worker, then the
    selection moves before the job ends: the preview, when it comes, lists the three rows
    that were selected when the key was pressed, and only they are deleted."""
    unlock(qtbot, inspector, demo_path)
    table, model = inspector.window.table, inspector.window.notes_model
    start, chosen = _three_selected(qtbot, inspector)
    inspector.prompts.reason = ""
    with long_job(inspector) as release:
        qtbot.keyClick(table, Qt.Key.Key_Delete)
        qtbot.keyClick(table, Qt.Key.Key_Up)  # one row, another one, selected meanwhile
        qtbot.keyClick(table, Qt.Key.Key_Up)
        assert not any(name == "bulk_preview" for name, _ in inspector.prompts.asked)
        release.set()
    qtbot.waitUntil(
        lambda: any(name == "bulk_preview" for name, _ in inspector.prompts.asked),
        timeout=SIGNAL_TIMEOUT,
    )
    wait_idle(qtbot, inspector)
    _, (preview, button) = inspector.prompts.asked[-1]
    assert [n.text for n in preview.notes] == chosen and button == "&Delete 3 notes"
    shown = note_texts(inspector)
    assert not set(chosen) & set(shown)
    assert model.index(start - 1, 0).data() in shown  # the row selected meanwhile stays


def test_issue21_item7_forget_everything_about_a_word(
    qtbot: Any, inspector: Inspector, demo_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    inspector.prompts.phrase = "garden"
    inspector.prompts.reason = ""
    with qtbot.waitSignal(inspector.controller.changed, timeout=SIGNAL_TIMEOUT * 3):
        inspector.window.forget_about_action.trigger()
    wait_idle(qtbot, inspector)
    _, (preview, button) = inspector.prompts.asked[-1]
    texts = {n.text for n in preview.notes}
    assert "Leads the community garden project." in texts
    assert all("garden" in t.casefold() for t in texts)
    assert button.startswith("&Forget ")
    assert not any("garden" in t.casefold() for t in note_texts(inspector))
    assert "forgotten" in inspector.window.statusBar().currentMessage()
    with sqlite3.connect(demo_path) as raw:
        shredded = raw.execute(
            "select count(*) from journal j where person='maya' and type in "
            "('note_added','corrected') and not exists (select 1 from journal_payloads p "
            "where p.person=j.person and p.seq=j.seq)"
        ).fetchone()[0]
    assert shredded >= len(texts)


def test_issue21_item7_new_since_last_visit_shows_what_was_learned_meanwhile(
    qtbot: Any, inspector: Inspector, demo_path: Path, monkeypatch: Any
) -> None:
    with qtbot.waitSignal(inspector.controller.visits.marked, timeout=SIGNAL_TIMEOUT):
        unlock(qtbot, inspector, demo_path)
    since = inspector.window.filters.since
    assert "first visit" in since.toolTip()
    open_person(qtbot, inspector, "sam")  # maya's visit is over
    # Meanwhile an agent, in another process, learns something about maya.
    monkeypatch.setenv("GUI_TEST_PASSPHRASE", PASSPHRASE)
    base = ["--store", str(demo_path), "--passphrase-env", "GUI_TEST_PASSPHRASE"]
    add = ["notes", "add", "--person", "maya", "--kind", "fact", "--scope", "direct"]
    with redirect_stdout(io.StringIO()):
        assert cli_main([*base, *add, "--text", "Started learning the cello."]) == 0
    with qtbot.waitSignal(inspector.controller.visits.marked, timeout=SIGNAL_TIMEOUT):
        open_person(qtbot, inspector, "maya")
    assert "since you last opened maya" in since.toolTip() and not since.isChecked()
    assert len(note_texts(inspector)) > 1
    with qtbot.waitSignal(inspector.controller.notes_shown, timeout=SIGNAL_TIMEOUT):
        qtbot.mouseClick(since, Qt.MouseButton.LeftButton, pos=since.rect().center())
    wait_idle(qtbot, inspector)
    assert note_texts(inspector) == ["Started learning the cello."]
    assert inspector.window.filters.count.text() == "1 note"


def test_issue21_item7_a_saved_filter_survives_a_new_window(
    qtbot: Any, tmp_path: Path, demo_path: Path
) -> None:
    windows = _inspector(qtbot, tmp_path, FakePrompts(), None)
    first = next(windows)
    unlock(qtbot, first, demo_path)
    f = first.window.filters
    f.scope.setCurrentIndex(f.scope.findData(["portable"]))
    qtbot.keyClicks(f.search, "garden")
    first.prompts.phrase = "Portable garden notes"
    f.save_button.click()
    assert "Portable garden notes" in first.window.statusBar().currentMessage()
    windows.close()  # the window locks and goes

    again = next(_inspector(qtbot, tmp_path, FakePrompts(), None))
    unlock(qtbot, again, demo_path)
    g = again.window.filters
    assert g.search.text() == "" and g.saved.count() == 3  # the name, and Remove…
    with qtbot.waitSignal(again.controller.notes_shown, timeout=SIGNAL_TIMEOUT):
        g.saved.activated.emit(g.saved.findData("Portable garden notes"))
    wait_idle(qtbot, again)
    assert g.search.text() == "garden" and g.scope.currentData() == ["portable"]
    assert note_texts(again) == ["Leads the community garden project."]
    again.prompts.chosen = "Portable garden notes"  # Remove a saved filter…, then its name
    g.saved.activated.emit(g.saved.count() - 1)
    assert g.saved.count() == 1 and "was removed" in again.window.statusBar().currentMessage()
