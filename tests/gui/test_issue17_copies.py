"""Issue 17 item 12, "A copied store is not broken": a copy without its checkpoint verifies
with a warning and offers "Re-anchor this copy…"; a real rollback is still a problem; a
store on read-only media opens read-only, says so, and nothing in it can be changed."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

from engram.control.export_record import EXPORT_READ_ONLY
from engram.control.notes import add_note
from engram.control.reanchor import checkpoint_status
from engram.control.session import PersonSession
from engram.gui.widgets import READ_ONLY_REASON
from engram.model.scope import Kind, Scope
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, select_note, show_tab, unlock, wait_idle
from tests.read_only_media import read_only_folder


def _side(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _copy_without_checkpoint(demo_path: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "review" / "copy.engram"
    copy.parent.mkdir()
    shutil.copy(demo_path, copy)  # as a reviewer copies a store: the file alone
    return copy


def _verify(qtbot: Any, inspector: Inspector) -> None:
    with qtbot.waitSignal(inspector.controller.verified, timeout=SIGNAL_TIMEOUT):
        inspector.window.verify_action.trigger()
    wait_idle(qtbot, inspector)


def test_issue17_item12_a_copy_without_its_checkpoint_is_a_warning_with_reanchor(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    copy = _copy_without_checkpoint(demo_path, tmp_path)
    unlock(qtbot, inspector, copy)
    w, prompts = inspector.window, inspector.prompts
    assert not w.audit.reanchor_button.isVisible()  # offered only once verify found it
    _verify(qtbot, inspector)
    badge, result = w.integrity_label.text(), w.audit.result.text()
    assert "PROBLEMS" not in badge and "chains intact" in badge, badge
    assert "Problems found" not in result and "reanchor" not in result.replace("Re-anchor", "")
    assert "chains intact; this copy has no checkpoint here" in result, result
    assert w.audit.reanchor_button.isVisible() and w.reanchor_action.isEnabled()

    prompts.yes = False  # the confirmation first says what it does; No changes nothing
    w.audit.reanchor_button.click()
    wait_idle(qtbot, inspector)
    [(_, text)] = [a for a in prompts.asked if a[0] == "question"]
    assert "checkpoint" in text and "Nothing in the notes or conversations changes" in text
    assert not _side(copy, ".checkpoint").exists()
    assert "Cancelled" in w.statusBar().currentMessage()

    prompts.yes = True
    with qtbot.waitSignal(inspector.controller.verified, timeout=SIGNAL_TIMEOUT) as checked:
        w.reanchor_action.trigger()
    wait_idle(qtbot, inspector)
    assert checked.args == [True]
    assert _side(copy, ".checkpoint").exists()
    assert w.integrity_label.text() == "integrity: ✔ verified"
    assert not w.audit.reanchor_button.isVisible() and not w.reanchor_action.isEnabled()
    store = inspector.controller.store
    assert store is not None
    [done] = checkpoint_status(store)["reanchored"]  # what `engram checkpoint reanchor` records
    assert done["previous"] == "missing"


def test_issue17_item12_a_real_rollback_is_still_problems_in_the_window(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    older = tmp_path / "older.engram"
    shutil.copy(demo_path, older)
    store = Store.open(str(demo_path), passphrase=PASSPHRASE)
    try:
        add_note(PersonSession.open(store, "maya"), "Moved to Lyon.", Kind.FACT, Scope.DIRECT)
    finally:
        store.close()
    shutil.copy(older, demo_path)  # the older file put back under the newer checkpoint
    for suffix in ("-wal", "-shm"):
        _side(demo_path, suffix).unlink(missing_ok=True)
    unlock(qtbot, inspector, demo_path)
    _verify(qtbot, inspector)
    w = inspector.window
    assert "PROBLEMS" in w.integrity_label.text()
    assert "older copy of the store may have been put back" in w.audit.result.text()
    assert not w.audit.reanchor_button.isVisible()  # a rollback is not a copy to vouch for


def _state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_issue17_item12_a_store_on_read_only_media_opens_read_only(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    copy = _copy_without_checkpoint(demo_path, tmp_path)
    with read_only_folder(copy.parent) as media:
        before = _state(media)
        unlock(qtbot, inspector, media / copy.name)
        w = inspector.window
        assert w.read_only_banner.isVisible() and "Read-only" in w.read_only_banner.text()
        assert w.store_label.text().endswith("(read-only)")
        select_note(qtbot, inspector, "Is vegetarian.")  # looking works
        show_tab(qtbot, inspector, w.candidates)
        w.candidates.table.selectRow(0)
        wait_idle(qtbot, inspector)
        store_changing = {
            "Edit": w.edit_action,
            "Scope": w.scope_action,
            "Delete": w.delete_action,
            "Learn": w.learn_action,
            "Erase person": w.erase_action,
            "Add note": w.add_note_action,
            "Add person": w.add_person_action,
            "Approve": w.candidates.approve_button,
            "Reject": w.candidates.reject_button,
            "Delete conversation (button)": w.conversations.delete_button,
            "Edit (button)": w.detail.edit_button,
        }
        on = sorted(name for name, control in store_changing.items() if control.isEnabled())
        assert on == [], f"on in a read-only store: {on}"
        assert all(READ_ONLY_REASON in c.toolTip() for c in store_changing.values())
        for export in (w.export_action, w.report_action):  # recorded in the audit log first
            assert not export.isEnabled() and EXPORT_READ_ONLY in export.toolTip()
        controller, asked = inspector.controller, len(inspector.prompts.asked)
        for reach in (  # reached however their controls are off: refused, and says why
            controller.notes.delete_selected,
            controller.person_actions.learn_now,
            controller.adding.add_person,
            lambda: controller.candidates.reject("c_x", 1),
        ):
            reach()
            assert w.statusBar().currentMessage() == READ_ONLY_REASON
        wait_idle(qtbot, inspector)
        assert len(inspector.prompts.asked) == asked  # nothing was even asked
        _verify(qtbot, inspector)
        assert "chains intact" in w.integrity_label.text()
        assert not w.audit.reanchor_button.isVisible()  # re-anchoring would write beside it
        inspector.controller.lock("done")
        assert _state(media) == before  # no -wal, no -shm, no checkpoint written
