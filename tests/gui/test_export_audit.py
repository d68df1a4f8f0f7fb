"""Issue 15 item 7: the inspector's export and its access report are recorded in the
person's audit log, as a plain sentence, only once the file is there."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from engram.model.events import EventType
from engram.store import journal
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, show_tab, unlock, wait_idle


def _newest_audit_row(qtbot: Any, inspector: Inspector) -> tuple[str, str]:
    """The audit tab's last row as shown: who, and what."""
    show_tab(qtbot, inspector, inspector.window.audit)
    model = inspector.window.audit.model
    last = model.rowCount() - 1
    return str(model.index(last, 1).data()), str(model.index(last, 2).data())


def _exports(inspector: Inspector) -> list[dict[str, Any]]:
    store, session = inspector.controller.store, inspector.controller.session
    assert store is not None and session is not None
    with store.read() as conn:
        events = journal.events_of_types(conn, session.person, [EventType.EXPORTED])
        return [e.body.to_json() for e in events]


def test_issue15_item7_the_inspectors_export_is_in_the_audit_log(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    show_tab(qtbot, inspector, inspector.window.audit)  # in view: it refreshes on the export
    target = tmp_path / "maya.json"
    inspector.prompts.path = str(target)
    with qtbot.waitSignal(inspector.controller.exported, timeout=SIGNAL_TIMEOUT):
        inspector.window.export_action.trigger()
    wait_idle(qtbot, inspector)
    model = inspector.window.audit.model
    last = model.rowCount() - 1
    assert (model.index(last, 1).data(), model.index(last, 2).data()) == (
        "test (staff)",  # the actor in words (issue 17 item 13); the id is in the tooltip
        "exported everything kept, as JSON, to a file",
    )
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert json.loads(target.read_text())["audit"][-1]["type"] != "exported"  # after, not in
    assert _exports(inspector) == [{"what": "export", "to": "file"}]


def test_issue15_item7_the_access_report_is_in_the_audit_log(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    target = tmp_path / "maya-access-report.pdf"
    inspector.prompts.path = str(target)
    saved = inspector.controller.person_actions.report_saved
    with qtbot.waitSignal(saved, timeout=SIGNAL_TIMEOUT * 3):
        inspector.window.report_action.trigger()
    wait_idle(qtbot, inspector)
    assert target.read_bytes().startswith(b"%PDF")
    assert _newest_audit_row(qtbot, inspector) == (
        "test (staff)",  # the actor in words (issue 17 item 13); the id is in the tooltip
        "saved an access report (PDF) to a file",
    )
    assert _exports(inspector) == [{"what": "access_report", "to": "file"}]


def test_issue15_item7_an_export_that_fails_is_not_recorded(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    out = tmp_path / "out"
    out.mkdir()
    inspector.prompts.path = str(out / "no such folder" / "maya.json")
    with qtbot.waitSignal(inspector.controller.hub.failed, timeout=SIGNAL_TIMEOUT):
        inspector.window.export_action.trigger()
    wait_idle(qtbot, inspector)
    assert inspector.prompts.errors and "does not exist" in inspector.prompts.errors[0]
    assert _exports(inspector) == [] and list(out.iterdir()) == []
    assert _newest_audit_row(qtbot, inspector)[1] != "exported everything kept, as JSON, to a file"
