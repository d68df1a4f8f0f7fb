"""The Qt binding must not lose references to None or booleans (PySide6 6.12.0 did, on
Python 3.11, and the inspector aborted after a few thousand model resets)."""

from __future__ import annotations

import sys

from PySide6.QtCore import QModelIndex, QObject

from engram.gui.notes_model import ListSource, NotesTableModel


def test_void_calls_and_model_resets_keep_none_alive(qtbot: object) -> None:
    holder = QObject()
    model = NotesTableModel()
    before = (sys.getrefcount(None), sys.getrefcount(True), sys.getrefcount(False))
    for _ in range(300):
        holder.setObjectName("x")
        model.set_source(None, ListSource([]))
        model.rowCount(QModelIndex())
    after = (sys.getrefcount(None), sys.getrefcount(True), sys.getrefcount(False))
    assert all(abs(b - a) < 50 for b, a in zip(before, after, strict=True)), (before, after)
