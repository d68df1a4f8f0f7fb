"""Issue 15 item 6: after the database commit nothing fails the command. A checkpoint or
anchor that cannot be written is a warning on stderr (one sentence), the command exits 0
and prints its result once — a retrying script would otherwise add a duplicate — and the
next verify brings the lagging checkpoint up to date."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from engram.model.ids import PersonId
from engram.runtime.conversations import start_conversation
from engram.store import chain
from engram.store.checkpoint_anchor import Anchor
from engram.store.store import Store
from engram.store.verify import verify
from tests.conftest import PASSPHRASE

Obstacle = Callable[[Store], Callable[[], None]]  # puts one in place; returns its removal


def _temporary_is_a_folder(store: Store) -> Callable[[], None]:
    """The issue's own case: a folder where the checkpoint's temporary file goes."""
    temporary = store.checkpoint.path.with_name(store.checkpoint.path.name + ".tmp")
    temporary.mkdir()
    return temporary.rmdir


def _checkpoint_is_a_folder(store: Store) -> Callable[[], None]:
    """The checkpoint itself cannot be opened for writing (its bytes are kept aside)."""
    path = store.checkpoint.path
    aside = path.with_name(path.name + ".aside")
    path.rename(aside)
    path.mkdir()

    def remove() -> None:
        path.rmdir()
        aside.rename(path)

    return remove


def _lock_is_a_folder(store: Store) -> Callable[[], None]:
    lock = store.checkpoint.path.with_name(store.checkpoint.path.name + ".lock")
    lock.unlink()
    lock.mkdir()
    return lock.rmdir


def _anchors_folder_is_a_file(store: Store) -> Callable[[], None]:
    folder = store.anchors.local_path.parent
    aside = folder.with_name("anchors.aside")
    folder.rename(aside)
    folder.write_text("not a folder")

    def remove() -> None:
        folder.unlink()
        aside.rename(folder)

    return remove


@pytest.mark.parametrize(
    "obstacle",
    [_temporary_is_a_folder, _checkpoint_is_a_folder, _lock_is_a_folder, _anchors_folder_is_a_file],
    ids=["temporary-file", "checkpoint-file", "lock-file", "anchors-folder"],
)
def test_issue15_item6_a_checkpoint_failure_after_the_commit_is_a_warning(
    store: Store, cli: Any, obstacle: Obstacle
) -> None:
    store.close()
    remove = obstacle(store)
    added = cli(
        "notes", "add", "--person", "ana", "--text", "kept", "--kind", "fact", "--scope", "direct"
    )
    assert added.code == 0, added.err
    assert "Traceback" not in added.err
    [note_id] = added.out.split()  # printed once: the note is there
    if obstacle is not _temporary_is_a_folder:  # the journal appends without a temporary
        [warning] = added.err.strip().splitlines()
        assert warning.startswith("warning: The change was saved, but ")
        assert warning.endswith("brings it up to date.") and warning.count(". ") == 0
    remove()
    reopened = Store.open(str(store.checkpoint.path.with_suffix("")), passphrase=PASSPHRASE)
    try:
        notes = cli("notes", "list", "--person", "ana", "--json").json()
        assert [n["id"] for n in notes] == [note_id]
        report = verify(reopened)
        assert report.ok, report.problems
        advanced = reopened.checkpoint.read()
        assert advanced is not None
        journal = reopened.hidden_name(chain.journal_chain("ana"))
        assert journal in advanced.chains  # verify advanced the lagging checkpoint
        assert reopened.anchors.read_local() == Anchor.of(advanced)
        again = verify(reopened)
        assert again.ok and not again.warnings, again.warnings
    finally:
        reopened.close()


def test_issue15_item6_the_library_hands_the_warning_to_its_host(store: Store) -> None:
    """Faces other than the CLI read the same sentences from the store."""
    remove = _checkpoint_is_a_folder(store)
    conversation = start_conversation(store, [PersonId("ana")])  # committed, and returned
    [warning] = store.take_warnings()
    assert "checkpoint" in warning and store.take_warnings() == []
    remove()
    assert verify(store).ok
    advanced = store.checkpoint.read()
    assert advanced is not None
    assert store.hidden_name(chain.log_chain(conversation.id)) in advanced.chains
