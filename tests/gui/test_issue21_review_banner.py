"""Issue 21 item 3: opening a review copy in the window says so plainly, above everything:
whose memory, from which store, taken when; any other store shows no such banner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engram.control import notes
from engram.control.review_copy import export_review_copy
from engram.control.session import PersonSession
from engram.store import crypto
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, unlock


def test_issue21_item3_the_window_says_it_holds_a_review_copy(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    live = Store.open(str(demo_path), passphrase=PASSPHRASE)
    try:
        session = PersonSession.open(live, "maya", "staff:dana")
        copy = tmp_path / "maya-review.engram"
        export_review_copy(session, copy, PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
        source = live.info.id
    finally:
        live.close()
    unlock(qtbot, inspector, copy)
    banner = inspector.window.review_banner
    assert banner.isVisible()
    assert banner.text().startswith("This is a review copy of maya's memory, taken from store ")
    assert source in banner.text() and "UTC" in banner.text()
    inspector.controller.lock()
    assert not banner.isVisible()
    unlock(qtbot, inspector, demo_path)
    assert not banner.isVisible()


def test_issue21_item2_item4_file_menu_exports_a_review_copy_and_brings_it_back(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    w, prompts = inspector.window, inspector.prompts
    copy = tmp_path / "maya-review.engram"
    prompts.path, prompts.review_secret = str(copy), "the reviewer's passphrase"
    review = inspector.controller.review
    assert w.export_review_action.isEnabled() and w.import_review_action.isEnabled()
    with qtbot.waitSignal(review.exported, timeout=SIGNAL_TIMEOUT):
        w.export_review_action.trigger()
    assert ("review_passphrase", (str(copy), True)) in prompts.asked
    assert prompts.informed[-1][0] == "Review copy saved"

    # The reviewer deletes one of maya's notes on the copy.
    reviewed = Store.open(str(copy), passphrase="the reviewer's passphrase")
    try:
        rita = PersonSession.open(reviewed, "maya", "staff:rita")
        target = next(v for v in notes.all_notes(rita) if v.note.is_active)
        notes.delete_note(rita, target.note.id, "not to keep")
    finally:
        reviewed.close()

    prompts.yes = True
    with qtbot.waitSignal(review.imported, timeout=SIGNAL_TIMEOUT) as got:
        w.import_review_action.trigger()
    result = got.args[0]
    assert [o.outcome for o in result.outcomes] == ["applied"]
    asked = [text for kind, text in prompts.asked if kind == "question"][-1]
    assert "staff:rita: deleted" in asked and "will be applied" in asked
    assert prompts.informed[-1][0] == "Review imported"
    live = inspector.controller.hub.store
    assert live is not None
    maya = PersonSession.open(live, "maya", "staff:test")
    assert not notes.get_note(maya, target.note.id).is_active
