"""Agents' memory settings for the window (issue 21 item 9): each configured agent, its
history in plain words, and what each setting lets the agent do.

Saving goes through `runtime.agents.set_agent_config`, the path `engram agents set` takes
(the same checks, the same signed ledger entry, the actor recorded). A review copy's agent
settings are shown and never changed: the review comes back as decisions about notes and
candidates (issue 21 item 4), so a setting changed there would silently stay behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engram.control.review_copy import review_copy_info
from engram.control.wording import counted
from engram.model.agents import AgentConfig, LearningMode, refuse_bad_combination
from engram.model.clock import parse_time
from engram.model.conversation import Surface
from engram.model.errors import NotAllowed
from engram.model.scope import Kind
from engram.model.sensitivity import label
from engram.runtime import agents
from engram.store.store import Store

REVIEW_COPY_REASON = (
    "This is a review copy: agent settings are changed on the live store, since a review "
    "brings back decisions about notes and candidates only."
)

MODE_MEANING = {
    LearningMode.OFF: "Learns nothing from conversations; notes come only from its tools "
    "and from people.",
    LearningMode.SUGGEST: "After each finished turn, suggests notes as candidates; none is "
    "kept until a person approves it.",
    LearningMode.AUTOMATIC: "After each finished turn, keeps the notes that are safe to keep "
    "and leaves ambiguous or sensitive ones waiting for a person's review.",
}
SURFACES_MEANING = (
    "Where it may learn from. Tasks and schedules never create memory, whatever is chosen "
    "here, and the host's kill switch overrides it."
)
KINDS_MEANING = "Which kinds of note learning may suggest or keep."
TOOL_MEANING = {
    "search": "Search: look up what is kept about the person it is talking to.",
    "remember": "Remember: keep a new note when asked to.",
    "update": "Update: correct a note it can see.",
    "forget": "Forget: close a note when the person asks it to.",
}
TOOLS_MEANING = (
    "Each tool is offered only if the host's own tool policy allows it too; these settings "
    "narrow what an agent may do, never widen it. The person is always the one the host "
    "says is talking, never one named in a message."
)
WRITABLE_MEANING = "Which kinds of note Remember and Update may write."
KIND_LABELS = {
    Kind.FACT: "facts",
    Kind.PREFERENCE: "preferences",
    Kind.OPEN_THREAD: "open threads",
    Kind.STYLE: "style",
}
SURFACE_LABELS = {Surface.CHAT: "direct chat", Surface.CHANNEL: "channels"}


@dataclass(frozen=True, slots=True)
class ConfiguredAgent:
    """One agent as the list shows it: its settings and when, and by whom, they were set."""

    config: AgentConfig
    set_at: str  # ISO time
    set_by: str


@dataclass(frozen=True, slots=True)
class AgentsShown:
    """Every configured agent, and why none may be changed here ("" when they may)."""

    agents: list[ConfiguredAgent]
    frozen: str = ""


@dataclass(frozen=True, slots=True)
class SettingsChange:
    """One entry of an agent's history, in words."""

    at: str  # ISO time
    by: str
    said: str  # what changed, in plain words
    settings: dict[str, Any]  # the whole configuration as set


def configured_agents(store: Store) -> AgentsShown:
    """Every configured agent (by name), and whether this store is one whose settings must
    not be changed from the window (a review copy)."""
    shown = [
        ConfiguredAgent(
            AgentConfig.from_json(row["name"], {"memory": row["memory"]}),
            row["updated_at"],
            row["updated_by"],
        )
        for row in agents.list_agents(store)
    ]
    return AgentsShown(shown, REVIEW_COPY_REASON if review_copy_info(store) else "")


def check_settings(config: AgentConfig) -> AgentConfig:
    """The checks a save makes (`engram agents set`'s), without saving: the window says at
    once why settings could not be saved. Raises InvalidInput with that sentence."""
    return refuse_bad_combination(AgentConfig.from_json(config.name, config.to_json()))


def save_settings(store: Store, config: AgentConfig, actor: str) -> AgentConfig:
    """Save an agent's settings as `engram agents set` does; refused on a review copy."""
    if review_copy_info(store):
        raise NotAllowed(REVIEW_COPY_REASON)
    return agents.set_agent_config(store, config, actor)


def settings_history(store: Store, name: str) -> list[SettingsChange]:
    """Who set what, and when, newest first; each entry says what it changed."""
    rows = agents.agent_history(store, name)
    changes: list[SettingsChange] = []
    before: AgentConfig | None = None
    for row in rows:
        after = AgentConfig.from_json(name, {"memory": row["memory"]})
        changes.append(
            SettingsChange(row["at"], row["by"], describe_change(before, after), row["memory"])
        )
        before = after
    return changes[::-1]


def when(iso: str) -> str:
    """A history time as the window shows it (to the minute, UTC)."""
    return parse_time(iso).strftime("%Y-%m-%d %H:%M UTC")


def _names(values: Any, labels: dict[Any, str]) -> str:
    words = [labels.get(v, str(v)) for v in sorted(values)]
    return ", ".join(words) if words else "none"


def describe_change(before: AgentConfig | None, after: AgentConfig) -> str:
    """What a configuration changed from the one before it, in one line."""
    if before is None:
        tools = _names(after.tools.enabled, {s: s for s in TOOL_MEANING})
        return f"First set: learning {after.learning.mode.value}; tools: {tools}."
    said: list[str] = []
    was, now = before.learning, after.learning
    if was.mode is not now.mode:
        said.append(f"learning {was.mode.value} → {now.mode.value}")
    for what, old, new, labels in (
        ("learns on", was.surfaces, now.surfaces, SURFACE_LABELS),
        ("learns", was.kinds, now.kinds, KIND_LABELS),
        ("applies unreviewed", was.auto_apply, now.auto_apply, None),
    ):
        if old != new:
            names = {c: label(c) for c in old | new} if labels is None else labels
            said.append(f"{what}: {_names(new, names)}")
    on = sorted(after.tools.enabled - before.tools.enabled)
    off = sorted(before.tools.enabled - after.tools.enabled)
    if on:
        said.append(f"turned on {', '.join(on)}")
    if off:
        said.append(f"turned off {', '.join(off)}")
    if before.tools.writable_kinds != after.tools.writable_kinds:
        said.append(f"tools may write: {_names(after.tools.writable_kinds, KIND_LABELS)}")
    if not said:
        return "Set again, unchanged."
    text = "; ".join(said)
    return text[0].upper() + text[1:] + "."


def history_summary(changes: list[SettingsChange]) -> str:
    """The history's heading line."""
    return f"{counted(len(changes), 'change')}, newest first."
