"""Issue 21 item 10 in the window: File › Import memories… asks for the file in a real
file dialog, previews what will be added and skipped, adds the memories as candidates off
the UI thread and shows them in the candidates tab; nothing becomes a note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMenu, QWidget

from engram.gui.dialogs import QuestionDialog
from tests.gui.conftest import (
    SIGNAL_TIMEOUT,
    Inspector,
    Modals,
    note_texts,
    unlock,
    wait_idle,
)

MEMORIES = """# What the other assistant kept

- Plays the trumpet in a brass band
- {known}

```
- not a memory
```
"""


def _memories_file(tmp_path: Path, inspector: Inspector) -> Path:
    known = note_texts(inspector)[0]  # one of maya's notes already says this
    path = tmp_path / "assistant-memories.md"
    path.write_text(MEMORIES.format(known=known), encoding="utf-8")
    return path


def _file_menu(inspector: Inspector) -> QMenu:
    (menu,) = [
        a.menu()
        for a in inspector.window.menuBar().actions()
        if a.text() == "&File" and isinstance(a.menu(), QMenu)
    ]
    assert isinstance(menu, QMenu)
    return menu


def test_issue21_item10_file_import_memories_previews_then_adds_candidates(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    window = inspector.window
    action = window.import_memories_action
    assert action in _file_menu(inspector).actions() and action.text() == "Import &memories…"
    assert action.isEnabled()
    notes_before = sorted(note_texts(inspector))
    path = _memories_file(tmp_path, inspector)
    inspector.prompts.path = str(path)
    inspector.prompts.yes = True

    with qtbot.waitSignal(inspector.controller.memory_import.imported, timeout=SIGNAL_TIMEOUT):
        action.trigger()
    wait_idle(qtbot, inspector)

    asked = [(kind, said) for kind, said in inspector.prompts.asked if kind != "actor_id"]
    assert [kind for kind, _ in asked] == ["memories_file", "question"]
    preview = str(asked[1][1])
    assert "Plays the trumpet in a brass band" in preview
    assert "skipped: a note already says it" in preview
    assert "1 candidate to add for review, 1 duplicate skipped" in preview
    assert window.tabs.currentWidget() is window.candidates
    panel = window.candidates
    qtbot.waitUntil(
        lambda: any(c["text"] == "Plays the trumpet in a brass band" for c in panel.rows),
        timeout=SIGNAL_TIMEOUT,
    )
    added = next(c for c in panel.rows if c["text"] == "Plays the trumpet in a brass band")
    assert added["status"] == "pending"
    assert added["imported"]["file"] == "assistant-memories.md"
    assert "1 candidate added for review" in window.statusBar().currentMessage()
    assert inspector.prompts.errors == []
    window.tabs.setCurrentIndex(0)
    wait_idle(qtbot, inspector)
    assert sorted(note_texts(inspector)) == notes_before  # never a note by itself


def test_issue21_item10_real_file_dialog_and_preview_then_the_candidate_detail(
    qtbot: Any, real_inspector: Inspector, demo_path: Path, modals: Modals, tmp_path: Path
) -> None:
    inspector = real_inspector
    unlock(qtbot, inspector, demo_path)
    path = _memories_file(tmp_path, inspector)
    seen: dict[str, Any] = {}

    def choose(dialog: QWidget) -> None:
        assert isinstance(dialog, QFileDialog)
        assert dialog.fileMode() == QFileDialog.FileMode.ExistingFile
        assert "*.json" in ";;".join(dialog.nameFilters())
        name = dialog.findChild(QLineEdit, "fileNameEdit")  # typed, as a person would
        assert name is not None
        name.setText(str(path))
        dialog.accept()

    def agree(dialog: QWidget) -> None:
        assert isinstance(dialog, QuestionDialog)
        seen["question"] = dialog.text.text()
        qtbot.mouseClick(dialog.yes, Qt.MouseButton.LeftButton)

    modals.expect(choose)
    modals.expect(agree)
    with qtbot.waitSignal(inspector.controller.memory_import.imported, timeout=SIGNAL_TIMEOUT):
        inspector.window.import_memories_action.trigger()
    wait_idle(qtbot, inspector)
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=SIGNAL_TIMEOUT)
    assert modals.unexpected == []
    assert "From assistant-memories.md (Markdown), for maya" in seen["question"]
    panel = inspector.window.candidates
    qtbot.waitUntil(
        lambda: any(c["text"] == "Plays the trumpet in a brass band" for c in panel.rows),
        timeout=SIGNAL_TIMEOUT,
    )
    row = next(i for i, c in enumerate(panel.rows) if c["text"].startswith("Plays the trumpet"))
    rect = panel.table.visualRect(panel.table.model().index(row, 4))
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    wait_idle(qtbot, inspector)
    qtbot.waitUntil(lambda: "Imported from" in panel.details.toPlainText(), timeout=SIGNAL_TIMEOUT)
    detail = panel.details.toPlainText()
    assert "Imported from assistant-memories.md, line 3, under “What the other assistant kept”" in (
        detail
    )
