"""Issue 17 item 12: a store whose file or folder cannot be written opens read-only — on
real read-only media (tests/read_only_media.py) — writes nothing beside it, reads what its
write-ahead log holds, and refuses every change in one sentence."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from engram.control.notes import add_note, list_notes
from engram.control.session import PersonSession
from engram.model.errors import ReadOnlyStore
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import start_conversation
from engram.store.store import READ_ONLY_SENTENCE, Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE
from tests.read_only_media import read_only_folder

ANA = PersonId("ana")


def _files(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _copy_while_open(store: Store, store_path: Path, folder: Path) -> Path:
    """The store's files as they stand while it is open: the newest note is still in the
    -wal (not yet copied into the file), as a copy taken of a live store would be."""
    folder.mkdir()
    for suffix in ("", "-wal", "-shm", ".checkpoint"):
        source = store_path.with_name(store_path.name + suffix)
        if source.exists():
            shutil.copy(source, folder / source.name)
    return folder / store_path.name


def test_issue17_item12_a_read_only_copy_reads_its_write_ahead_log_and_writes_nothing(
    store: Store, store_path: Path, tmp_path: Path
) -> None:
    start_conversation(store, [ANA])
    add_note(PersonSession.open(store, ANA), "Lives in Oslo.", Kind.FACT, Scope.DIRECT)
    wal = store_path.with_name(store_path.name + "-wal")
    assert wal.exists() and wal.stat().st_size > 0  # the note is in the log, not the file
    copy = _copy_while_open(store, store_path, tmp_path / "media")
    with read_only_folder(copy.parent) as media:
        before = _files(media)
        opened = Store.open(str(media / copy.name), passphrase=PASSPHRASE)
        try:
            assert opened.read_only
            session = PersonSession.open(opened, ANA)
            assert [v.text for v in list_notes(session)] == ["Lives in Oslo."]
            report = verify(opened)
            assert report.ok, report.problems
            with pytest.raises(ReadOnlyStore) as refused:
                add_note(session, "Moved to Bergen.", Kind.FACT, Scope.DIRECT)
            assert str(refused.value) == READ_ONLY_SENTENCE
        finally:
            opened.close()
        assert _files(media) == before  # nothing written beside it, the -wal untouched


def test_issue17_item12_a_log_that_cannot_be_read_read_only_is_one_sentence(
    store: Store, store_path: Path, tmp_path: Path
) -> None:
    start_conversation(store, [ANA])
    add_note(PersonSession.open(store, ANA), "Lives in Oslo.", Kind.FACT, Scope.DIRECT)
    copy = _copy_while_open(store, store_path, tmp_path / "media")
    copy.with_name(copy.name + "-shm").unlink()  # SQLite needs it to read the log there
    with read_only_folder(copy.parent) as media, pytest.raises(ReadOnlyStore) as refused:
        Store.open(str(media / copy.name), passphrase=PASSPHRASE)
    assert "write-ahead log" in str(refused.value) and "copy the store" in str(refused.value)
