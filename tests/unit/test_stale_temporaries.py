"""Issue 15 item 11: a writer killed before its rename leaves a temporary file (an anchor's
`.tmp`, the checkpoint's `.tmp`, an export's `.part`); the next writer removes what nobody
is writing any more, and leaves alone what another writer is writing right now."""

from __future__ import annotations

import os
import time
from pathlib import Path

from engram.control.private_file import write_private
from engram.model.ids import PersonId
from engram.runtime.conversations import start_conversation
from engram.store.store import Store
from tests.conftest import PASSPHRASE


def _left_behind(path: Path, minutes_ago: float) -> Path:
    path.write_text("half written")
    then = time.time() - minutes_ago * 60
    os.utime(path, (then, then))
    return path


def test_issue15_item11_stale_anchor_temporaries_are_removed(store: Store) -> None:
    folder = store.anchors.local_path.parent
    stale = _left_behind(folder / "s_0123456789abcdef-0123456789abcdef.json.4242.tmp", 5)
    other_store = _left_behind(folder / "s_fedcba9876543210-fedcba9876543210.json.x.tmp", 5)
    being_written = _left_behind(folder / f"{store.anchors.local_path.name}.now.tmp", 0)
    store.close()
    reopened = Store.open(str(store.checkpoint.path.with_suffix("")), passphrase=PASSPHRASE)
    try:
        start_conversation(reopened, [PersonId("ana")])
    finally:
        reopened.close()
    assert not stale.exists() and not other_store.exists()
    assert being_written.exists()
    assert store.anchors.local_path.exists()


def test_issue15_item11_a_stale_checkpoint_temporary_is_removed_under_the_lock(
    store: Store,
) -> None:
    # Only writers holding the checkpoint's lock write this file: under it, any is stale.
    leftover = _left_behind(store.checkpoint.path.with_name("test.engram.checkpoint.tmp"), 0)
    start_conversation(store, [PersonId("ana")])
    assert not leftover.exists()


def test_issue15_item11_stale_export_parts_are_removed(tmp_path: Path) -> None:
    stale = _left_behind(tmp_path / ".export.json.k3j4h5.part", 5)
    another_file = _left_behind(tmp_path / ".report.pdf.k3j4h5.part", 5)
    being_written = _left_behind(tmp_path / ".export.json.abcdef.part", 0)
    write_private(tmp_path / "export.json", b"{}")
    assert not stale.exists()
    assert being_written.exists() and another_file.exists()  # not this target's, or too young
