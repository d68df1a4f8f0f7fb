"""Issue 21 item 9: File › Agent settings… edits each agent's learning mode, surfaces, kinds
and memory tools (P2, P4, P5) in a form that saves through `engram agents set`'s path and
signed ledger, shows the agent's history, says what each setting lets the agent do, and
refuses a bad combination in the CLI's own sentence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from sqlalchemy import select

from engram.control.agent_settings import MODE_MEANING, REVIEW_COPY_REASON, save_settings
from engram.control.review_copy import export_review_copy
from engram.control.session import PersonSession
from engram.gui.agent_settings_dialog import AgentSettingsDialog
from engram.gui.controllers.agents import AgentSettingsController
from engram.model.agents import AgentConfig, LearningMode
from engram.model.errors import NotAllowed
from engram.store import crypto, ledger, schema
from engram.store.store import Store
from tests.conftest import PASSPHRASE
from tests.gui.conftest import SIGNAL_TIMEOUT, Inspector, unlock, wait_idle


def _open(qtbot: Any, inspector: Inspector) -> tuple[AgentSettingsController, AgentSettingsDialog]:
    agents = inspector.controller.agent_settings
    with qtbot.waitSignal(agents.history_shown, timeout=SIGNAL_TIMEOUT):
        inspector.window.agent_settings_action.trigger()
    wait_idle(qtbot, inspector)
    assert agents.dialog is not None and agents.dialog.isVisible()
    return agents, agents.dialog


def _space(qtbot: Any, box: Any) -> None:
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Space)


def _save(qtbot: Any, inspector: Inspector, agents: AgentSettingsController) -> None:
    d = agents.dialog
    assert d is not None and d.save_button.isEnabled(), d.refusal.text()
    with (
        qtbot.waitSignal(agents.history_shown, timeout=SIGNAL_TIMEOUT),
        qtbot.waitSignal(agents.saved, timeout=SIGNAL_TIMEOUT),
    ):
        qtbot.mouseClick(d.save_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, inspector)


def test_issue21_item9_P2_form_saves_through_the_ledger_and_the_cli_sees_it(
    qtbot: Any, inspector: Inspector, demo_path: Path, cli: Any
) -> None:
    unlock(qtbot, inspector, demo_path)
    agents, d = _open(qtbot, inspector)
    # The demo's agent, as staff:dana set it: suggest, no tools.
    assert d.heading.text() == "Agent coach"
    assert "by staff:dana" in d.set_by.text()
    assert d.mode.currentText() == "Suggest"
    assert d.mode_meaning.text() == MODE_MEANING[LearningMode.SUGGEST]
    assert not d.save_button.isEnabled()  # nothing changed yet
    d.mode.setFocus()
    qtbot.keyClick(d.mode, Qt.Key.Key_Down)  # Suggest -> Automatic
    assert d.mode_meaning.text() == MODE_MEANING[LearningMode.AUTOMATIC]
    _space(qtbot, d.tools["remember"])
    _space(qtbot, d.tools["search"])
    _space(qtbot, d.auto_apply["location"])
    assert "applied automatically: precise location" in d.auto_apply_meaning.text()
    _save(qtbot, inspector, agents)
    shown = cli("agents", "show", "coach", "--json", store=demo_path).json()
    assert shown["memory"]["learning"]["mode"] == "automatic"
    assert shown["memory"]["learning"]["autoApplyCategories"] == ["location"]
    assert {k for k, v in shown["memory"]["tools"].items() if v is True} == {
        "search",
        "remember",
    }
    listed = cli("agents", "list", "--json", store=demo_path).json()
    assert [(r["name"], r["updated_by"]) for r in listed] == [("coach", "staff:test")]
    assert "Agent coach" in d.heading.text() and "by staff:test" in d.set_by.text()
    assert not d.save_button.isEnabled()  # saved: nothing left to save
    verified = cli("verify", store=demo_path)
    assert verified.code == 0, verified.out + verified.err  # the signed ledger vouches


def test_issue21_item9_history_says_who_changed_what_when(
    qtbot: Any, inspector: Inspector, demo_path: Path, cli: Any
) -> None:
    unlock(qtbot, inspector, demo_path)
    agents, d = _open(qtbot, inspector)
    assert d.history.topLevelItemCount() == 1
    first = d.history.topLevelItem(0)
    assert first.text(1) == "staff:dana"
    assert first.text(2) == "First set: learning suggest; tools: none."
    _space(qtbot, d.tools["forget"])
    _space(qtbot, d.surfaces["channel"])  # learn on direct chat only
    _save(qtbot, inspector, agents)
    assert d.history.topLevelItemCount() == 2
    newest = d.history.topLevelItem(0)
    assert newest.text(1) == "staff:test"
    assert newest.text(2) == "Learns on: direct chat; turned on forget."
    assert "UTC" in newest.text(0)
    history = cli("agents", "history", "coach", "--json", store=demo_path).json()
    assert newest.toolTip(0).startswith(f"Set at {history[-1]['at']} by staff:test")
    assert json.loads(newest.toolTip(2).split("\n", 1)[1]) == {"memory": history[-1]["memory"]}
    assert "History" not in d.history_summary.text() and d.history_summary.text().startswith(
        "2 changes"
    )


def test_issue21_item9_P4_a_bad_combination_is_refused_in_the_clis_sentence(
    qtbot: Any, inspector: Inspector, demo_path: Path, cli: Any, tmp_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    _agents, d = _open(qtbot, inspector)
    _space(qtbot, d.surfaces["chat"])
    _space(qtbot, d.surfaces["channel"])  # learning suggest, on no surface at all
    said = d.refusal.text()
    assert said == (
        "Learning is suggest but has no surface to learn on, so it would never learn; choose "
        "chat or channel, or turn learning off (memory.learning.surfaces)."
    )
    assert not d.save_button.isEnabled() and d.save_button.toolTip() == said
    qtbot.mouseClick(d.save_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, inspector)
    file = tmp_path / "no-surface.json"
    file.write_text(json.dumps({"memory": {"learning": {"mode": "suggest", "surfaces": []}}}))
    refused = cli("agents", "set", "coach", "--config", str(file), store=demo_path)
    assert refused.code != 0 and said in refused.err  # one check, both faces
    assert len(cli("agents", "history", "coach", "--json", store=demo_path).json()) == 1
    _space(qtbot, d.surfaces["chat"])
    assert d.refusal.text() == "" and d.save_button.isEnabled()


def _last_entry_tables(store: Store) -> list[str]:
    with store.read() as conn:
        body = conn.execute(
            select(schema.ledger.c.body).order_by(schema.ledger.c.seq.desc()).limit(1)
        ).scalar_one()
    return sorted(table for table, _subject, digest in ledger.changes(body) if digest)


def test_issue21_item9_form_and_cli_write_the_same_ledger_entry(
    qtbot: Any, inspector: Inspector, demo_path: Path, cli: Any, tmp_path: Path
) -> None:
    unlock(qtbot, inspector, demo_path)
    agents, d = _open(qtbot, inspector)
    qtbot.keyClicks(d.new_name, "helper.v2")
    with qtbot.waitSignal(agents.history_shown, timeout=SIGNAL_TIMEOUT):
        qtbot.keyClick(d.new_name, Qt.Key.Key_Return)
    wait_idle(qtbot, inspector)
    assert d.heading.text() == "Agent helper.v2" and "Not saved yet" in d.set_by.text()
    d.mode.setFocus()
    qtbot.keyClick(d.mode, Qt.Key.Key_Down)  # Off -> Suggest
    _space(qtbot, d.tools["search"])
    _save(qtbot, inspector, agents)
    store = inspector.controller.store
    assert store is not None
    by_form = _last_entry_tables(store)
    file = tmp_path / "same.json"
    settings = {"tools": {"search": True}, "learning": {"mode": "suggest"}}
    file.write_text(json.dumps({"memory": settings}))
    by_cli = cli("agents", "set", "by-cli", "--config", str(file), store=demo_path)
    assert by_cli.code == 0, by_cli.err
    assert _last_entry_tables(store) == by_form == ["agent_config_history", "agents"]
    history = {
        name: cli("agents", "history", name, "--json", store=demo_path).json()[-1]
        for name in ("helper.v2", "by-cli")
    }
    assert history["helper.v2"]["memory"] == history["by-cli"]["memory"]
    assert history["helper.v2"]["by"] == "staff:test" and history["by-cli"]["by"] == "operator"
    assert cli("verify", store=demo_path).code == 0


def test_issue21_item9_a_review_copy_shows_settings_but_changes_none(
    qtbot: Any, inspector: Inspector, demo_path: Path, tmp_path: Path
) -> None:
    live = Store.open(str(demo_path), passphrase=PASSPHRASE)
    try:
        session = PersonSession.open(live, "maya", "staff:dana")
        copy = tmp_path / "maya-review.engram"
        export_review_copy(session, copy, PASSPHRASE, kdf=crypto.FAST_KDF_FOR_TESTS)
    finally:
        live.close()
    unlock(qtbot, inspector, copy)
    agents = inspector.controller.agent_settings
    with qtbot.waitSignal(agents.listed, timeout=SIGNAL_TIMEOUT):
        inspector.window.agent_settings_action.trigger()
    wait_idle(qtbot, inspector)
    d = agents.dialog
    assert d is not None
    assert d.frozen_label.isVisible() and d.frozen_label.text() == REVIEW_COPY_REASON
    assert not d.save_button.isEnabled() and not d.add_button.isEnabled()
    store = inspector.controller.store
    assert store is not None
    try:
        save_settings(store, AgentConfig("sneaky"), "staff:test")
    except NotAllowed as error:
        assert str(error) == REVIEW_COPY_REASON
    else:
        raise AssertionError("a review copy took an agent's settings")
    inspector.controller.lock()
    assert agents.dialog is None  # a lock closes it: nothing of the store stays on screen
