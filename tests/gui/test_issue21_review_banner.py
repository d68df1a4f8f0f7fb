"""Issue 21 item 3: opening a review copy in the window says so plainly, above everything:
whose memory, from which store, taken when; any other store shows no such banner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engram.control.review_copy import export_review_copy
from engram.control.session import PersonSession
from engram.store import crypto
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.gui.conftest import Inspector, unlock


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
