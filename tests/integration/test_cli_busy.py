"""A store another program keeps writing to: the CLI waits its busy timeout, then says so in
one sentence and exits 1, with nothing written — never a traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engram.store import dialect
from engram.store.store import Store


def test_a_busy_store_is_one_sentence_and_nothing_is_written(
    cli: Any, store: Store, store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.close()
    monkeypatch.setattr(dialect, "BUSY_TIMEOUT_MS", 200)
    assert (
        cli(
            "notes",
            "add",
            "--person",
            "ana",
            "--text",
            "first",
            "--kind",
            "fact",
            "--scope",
            "direct",
        ).code
        == 0
    )
    other = sqlite3.connect(store_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    try:
        added = cli(
            "notes",
            "add",
            "--person",
            "ana",
            "--text",
            "second",
            "--kind",
            "fact",
            "--scope",
            "direct",
        )
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert added.code == 1 and added.out == ""
    assert added.err.strip().count("\n") == 0 and "Traceback" not in added.err
    assert "busy" in added.err and "nothing was written" in added.err
    listed = cli("notes", "list", "--person", "ana", "--json")
    assert [n["text"] for n in listed.json()] == ["first"]
