"""Issue 9 item 3, the inspector's side: when another Engram process finishing an erasure
asks every holder of the store to let go, the open inspector drops its search index of
decrypted conversations, the store's cached keys and decrypted text, and its idle
connections — without being locked or closed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, unlock, wait_idle

POST_FROM_ANOTHER_PROCESS = (
    "import sys; from pathlib import Path; from engram.store.release import ReleaseRequests; "
    "ReleaseRequests(Path(sys.argv[1])).post()"
)


def test_issue9_item3_the_inspector_lets_go_when_an_erasure_elsewhere_asks(
    qtbot: Any, inspector: Inspector, demo_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unlock(qtbot, inspector, demo_path)
    controller = inspector.controller
    with qtbot.waitSignal(controller.searched, timeout=SIGNAL_TIMEOUT):
        controller.conversations.search_person("coffee", "relevance")
    wait_idle(qtbot, inspector)
    store = controller.store
    assert store is not None and controller.conversations._person_index is not None
    store.plaintext_caches["a decrypted log"] = "text"
    # What the store held at the moment it let go: panels reload right after (from a fresh
    # snapshot), so keys may be cached again by the time the test looks.
    at_release: dict[str, object] = {}
    asked = store.release_requested

    def watched() -> bool:
        released = asked()
        if released:
            at_release.update(caches=dict(store.plaintext_caches), keys=store.keys.cached())
        return released

    monkeypatch.setattr(store, "release_requested", watched)
    with qtbot.waitSignal(controller.store_lock.release_hook.released, timeout=SIGNAL_TIMEOUT):
        subprocess.run(
            [sys.executable, "-c", POST_FROM_ANOTHER_PROCESS, str(demo_path)], check=True
        )
    assert controller.conversations._person_index is None
    assert at_release == {"caches": {}, "keys": {}}
    assert "a decrypted log" not in store.plaintext_caches
    assert controller.store is store  # still open: it let go, it did not lock
    wait_idle(qtbot, inspector)
    assert inspector.window.people.count() > 0  # and it reads again from a fresh snapshot
