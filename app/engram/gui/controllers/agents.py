"""File › Agent settings… (issue 21 item 9): the window's half of `engram agents set`.

The form builds typed settings and saves them through control/agent_settings.py, which
takes the CLI's path (runtime.agents: the same checks, the same signed ledger entry, the
actor recorded), off the UI thread. A bad combination is said in one sentence as soon as
it is made, from the same checks, and Save waits until it is put right. Nothing can be
changed while the store is read-only, shows the past, or is a review copy. A lock closes
the dialog (nothing of the store stays on screen).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QCheckBox, QListWidgetItem, QTreeWidgetItem

from engram.control import agent_settings
from engram.control.agent_settings import AgentsShown, ConfiguredAgent, SettingsChange
from engram.gui.agent_settings_dialog import AGENT_ROLE, AgentSettingsDialog
from engram.gui.controllers.hub import Hub
from engram.model.agents import (
    AgentConfig,
    Learning,
    LearningMode,
    MemoryTools,
    auto_apply_sentence,
    check_agent_name,
)
from engram.model.conversation import Surface
from engram.model.errors import InvalidInput
from engram.model.scope import Kind
from engram.model.sensitivity import SensitiveCategory

T = TypeVar("T")


class AgentSettingsController(QObject):
    """Opens the dialog, fills it from the store, and saves what the form says."""

    listed = Signal()  # the agents were (re)listed
    history_shown = Signal(str)  # the agent whose history is on screen
    saved = Signal(str)  # the agent whose settings were saved
    refused = Signal(str)  # why a save was refused (the sentence shown)

    def __init__(self, hub: Hub) -> None:
        super().__init__(hub)
        self.hub = hub
        self.w = hub.w
        self.dialog: AgentSettingsDialog | None = None
        self.shown: dict[str, ConfiguredAgent] = {}
        self.current: str | None = None
        self.frozen = ""
        self._filling = False
        self.w.agent_settings_action.triggered.connect(self.open)
        hub.session_changed.connect(self._store_changed)
        hub.past_changed.connect(lambda _past: self._update_controls())
        self._generation = hub.store_generation
        self._store_changed()

    # ---- opening and closing ------------------------------------------------------------

    def _store_changed(self) -> None:
        self.w.agent_settings_action.setEnabled(self.hub.store is not None)
        if self.hub.store_generation != self._generation:
            self._generation = self.hub.store_generation
            self.close()

    def close(self) -> None:
        """Close the dialog; what it showed goes with it."""
        if self.dialog is not None:
            self.dialog.reject()
            self.dialog.deleteLater()
            self.dialog = None
        self.shown, self.current = {}, None

    def open(self) -> None:
        """Show the dialog (raised if open already) and list the agents."""
        if self.hub.store is None:
            return
        if self.dialog is None:
            self.dialog = self._build()
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()
        self.reload()

    def _build(self) -> AgentSettingsDialog:
        d = AgentSettingsDialog(self.w)
        d.addActions([self.w.lock_action, self.w.quit_action])
        d.agents.currentItemChanged.connect(lambda item, _old: self._chosen(item))
        d.add_button.clicked.connect(self.add_agent)
        d.new_name.returnPressed.connect(self.add_agent)
        d.save_button.clicked.connect(self.save)
        d.revert_button.clicked.connect(lambda: self._fill(self._saved_config()))
        d.mode.currentIndexChanged.connect(lambda _i: self._edited())
        for box in self._boxes(d):
            box.toggled.connect(lambda _on: self._edited())
        return d

    @staticmethod
    def _boxes(d: AgentSettingsDialog) -> list[QCheckBox]:
        groups = (d.surfaces, d.kinds, d.auto_apply, d.tools, d.writable)
        return [box for group in groups for box in group.values()]

    # ---- listing ------------------------------------------------------------------------

    def reload(self, select: str | None = None) -> None:
        """List the configured agents off the UI thread; choose `select` (or the one shown)."""
        store = self.hub.store
        if store is None or self.dialog is None:
            return
        wanted = select or self.current
        self.hub.run(
            lambda _ctx: agent_settings.configured_agents(store),
            lambda shown: self._listed(shown, wanted),
            store_wide=True,
        )

    def _listed(self, shown: AgentsShown, wanted: str | None) -> None:
        d = self.dialog
        if d is None:
            return
        self.shown = {a.config.name: a for a in shown.agents}
        self.frozen = shown.frozen
        unsaved = [wanted] if wanted and wanted not in self.shown else []
        self._filling = True
        d.agents.clear()
        for name in [*self.shown, *unsaved]:
            item = QListWidgetItem(name if name in self.shown else f"{name} (not saved yet)")
            item.setData(AGENT_ROLE, name)
            d.agents.addItem(item)
        self._filling = False
        names = [*self.shown, *unsaved]
        if wanted is not None and wanted == self.current:
            self.current = None  # the same agent again (just saved): show it as stored now
        if names:
            d.agents.setCurrentRow(names.index(wanted) if wanted in names else 0)
        if d.agents.currentItem() is None or self.current is None:
            self._chosen(d.agents.currentItem())
        self._update_controls()
        self.listed.emit()

    def add_agent(self) -> None:
        """A new agent, everything off until saved (the name checked as the CLI does)."""
        d = self.dialog
        if d is None:
            return
        name = d.new_name.text().strip()
        try:
            check_agent_name(name)
        except InvalidInput as error:
            d.refusal.setText(str(error))
            return
        d.new_name.clear()
        if name not in self.shown:
            self.reload(select=name)
        else:
            self._select(name)

    def _select(self, name: str) -> None:
        d = self.dialog
        assert d is not None
        for row in range(d.agents.count()):
            if d.agents.item(row).data(AGENT_ROLE) == name:
                d.agents.setCurrentRow(row)

    def _chosen(self, item: QListWidgetItem | None) -> None:
        if self._filling or self.dialog is None:
            return
        name = item.data(AGENT_ROLE) if item is not None else None
        if name == self.current and name is not None:
            return
        if self.current is not None and self._dirty():
            keep = not self.hub.ask(
                lambda p: (
                    p.question(
                        "Discard changes?",
                        f"The changes to agent {self.current}'s settings are not saved.",
                        "&Discard",
                    )
                    or None
                )
            )
            if keep:
                self._filling = True
                self._select(self.current)
                self._filling = False
                return
        self.current = name
        self._fill(self._saved_config())
        self._show_history()

    # ---- the form -----------------------------------------------------------------------

    def _saved_config(self) -> AgentConfig | None:
        if self.current is None:
            return None
        found = self.shown.get(self.current)
        return found.config if found else AgentConfig(self.current)

    def _fill(self, config: AgentConfig | None) -> None:
        d = self.dialog
        if d is None:
            return
        self._filling = True
        d.heading.setText(f"Agent {config.name}" if config else "No agent is configured yet")
        found = self.shown.get(config.name) if config else None
        d.set_by.setText(
            f"Set {agent_settings.when(found.set_at)} by {found.set_by}."
            if found
            else "Not saved yet: everything is off until you save."
            if config
            else "Type a new agent's name and choose Add."
        )
        config = config or AgentConfig("unnamed")
        d.mode.setCurrentIndex(d.mode.findData(config.learning.mode.value))
        for group, chosen in (
            (d.surfaces, config.learning.surfaces),
            (d.kinds, config.learning.kinds),
            (d.auto_apply, config.learning.auto_apply),
            (d.tools, config.tools.enabled),
            (d.writable, config.tools.writable_kinds),
        ):
            for value, box in group.items():
                box.setChecked(value in chosen)
        self._filling = False
        self._edited()

    def form_config(self) -> AgentConfig | None:
        """What the form says, as typed settings (None with no agent chosen)."""
        d = self.dialog
        if d is None or self.current is None:
            return None

        def ticked(group: dict[str, QCheckBox], kind: Callable[[str], T]) -> frozenset[T]:
            return frozenset(kind(v) for v, box in group.items() if box.isChecked())

        saved = self._saved_config()
        assert saved is not None
        return AgentConfig(
            self.current,
            MemoryTools(ticked(d.tools, str), saved.tools.write_scope, ticked(d.writable, Kind)),
            Learning(
                LearningMode(d.mode.currentData()),
                ticked(d.surfaces, Surface),
                ticked(d.kinds, Kind),
                ticked(d.auto_apply, SensitiveCategory),
            ),
        )

    def _dirty(self) -> bool:
        config = self.form_config()
        saved = self.current is not None and self.current in self.shown
        return config is not None and (not saved or config != self._saved_config())

    def _edited(self) -> None:
        d = self.dialog
        if d is None or self._filling:
            return
        config = self.form_config()
        mode = LearningMode(d.mode.currentData())
        d.mode_meaning.setText(agent_settings.MODE_MEANING[mode])
        refusal = ""
        if config is not None:
            d.auto_apply_meaning.setText(auto_apply_sentence(config))
            try:
                agent_settings.check_settings(config)
            except InvalidInput as error:
                refusal = str(error)
        d.refusal.setText(refusal)
        self._update_controls(refusal)

    def _update_controls(self, refusal: str | None = None) -> None:
        d = self.dialog
        if d is None:
            return
        frozen = self.frozen or self.hub.frozen
        d.frozen_label.setText(frozen)
        d.frozen_label.setVisible(bool(frozen))
        chosen = self.current is not None
        d.form.setEnabled(chosen and not frozen)
        d.add_button.setEnabled(not frozen)
        d.new_name.setEnabled(not frozen)
        refused = bool(d.refusal.text()) if refusal is None else bool(refusal)
        dirty = chosen and self._dirty()
        d.save_button.setEnabled(dirty and not frozen and not refused)
        d.revert_button.setEnabled(dirty and not frozen)
        d.save_button.setToolTip(frozen or d.refusal.text() or "Save these settings")

    # ---- saving -------------------------------------------------------------------------

    def save(self) -> None:
        """Save the form's settings as `engram agents set` would, off the UI thread."""
        store, config = self.hub.store, self.form_config()
        if store is None or config is None or self.dialog is None:
            return
        if self.frozen:
            self.hub.status(self.frozen, 8000)
            return
        if not self.hub.writable():
            return
        actor = self.hub.actor or "operator"
        self.dialog.save_button.setEnabled(False)

        def done(saved: AgentConfig) -> None:
            lagging = store.take_warnings()
            said = f"Saved agent {saved.name}'s settings: learning {saved.learning.mode.value}."
            self.hub.status(" ".join([said, *lagging]), 10_000)
            self.saved.emit(saved.name)
            self.reload(select=saved.name)

        def failed(message: str) -> None:
            if self.dialog is not None:
                self.dialog.refusal.setText(message)
            self._update_controls()
            self.refused.emit(message)

        self.hub.run(
            lambda _ctx: agent_settings.save_settings(store, config, actor),
            done,
            failed,
            store_wide=True,
            changes=True,
        )

    # ---- the history --------------------------------------------------------------------

    def _show_history(self) -> None:
        d, store, name = self.dialog, self.hub.store, self.current
        if d is None or store is None:
            return
        d.history.clear()
        if name is None or name not in self.shown:
            d.history_summary.setText("No history yet: these settings were never saved.")
            self.history_shown.emit(name or "")
            return
        self.hub.run(
            lambda _ctx: agent_settings.settings_history(store, name),
            lambda changes: self._history(name, changes),
            store_wide=True,
        )

    def _history(self, name: str, changes: list[SettingsChange]) -> None:
        d = self.dialog
        if d is None or name != self.current:
            return
        d.history.clear()
        d.history_summary.setText(agent_settings.history_summary(changes))
        for change in changes:
            item = QTreeWidgetItem([agent_settings.when(change.at), change.by, change.said])
            tip = json.dumps({"memory": change.settings}, indent=2, sort_keys=True)
            for column in range(3):
                item.setToolTip(column, f"Set at {change.at} by {change.by}\n{tip}")
            item.setData(0, Qt.ItemDataRole.UserRole, change.at)
            d.history.addTopLevelItem(item)
        self.history_shown.emit(name)
