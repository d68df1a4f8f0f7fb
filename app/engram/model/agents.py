"""Per-agent memory configuration (P2) and who may learn from what (P4).

The JSON shape follows the reference's agent configuration:

    {"memory": {"tools": {"search": true, "remember": true, "update": true, "forget": true,
                          "writeScope": "invocation-user",
                          "writableKinds": ["fact", "preference", "open_thread", "style"]},
                "learning": {"mode": "suggest", "surfaces": ["chat", "channel"],
                             "kinds": ["fact", "preference", "open_thread", "style"]}}}

Everything is off unless the configuration turns it on. Memory settings narrow what an
agent may do; they never widen the host's own tool policy.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from engram.model.conversation import Surface
from engram.model.errors import InvalidInput, NotAllowed
from engram.model.scope import Kind
from engram.model.sensitivity import SensitiveCategory, label
from engram.model.wire import AgentConfigFile, WireError, parse_json, validate_data

AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,119}$")
ALL_KINDS = frozenset(Kind)
# P4: only direct chat and channels can teach; tasks and schedules never create memory.
LEARNING_SURFACES = frozenset({Surface.CHAT, Surface.CHANNEL})
INVOCATION_USER = "invocation-user"
# Setting -> the typed tool it exposes.
TOOL_FOR_SETTING = {
    "search": "memory_search",
    "remember": "memory_remember",
    "update": "memory_update_item",
    "forget": "memory_forget",
}


class LearningMode(StrEnum):
    """What post-turn learning does with what it finds (P5)."""

    OFF = "off"
    SUGGEST = "suggest"
    AUTOMATIC = "automatic"


@dataclass(frozen=True, slots=True)
class MemoryTools:
    """Which typed memory tools an agent asks for, and what they may write."""

    enabled: frozenset[str] = frozenset()  # settings from TOOL_FOR_SETTING that are true
    write_scope: str = INVOCATION_USER
    writable_kinds: frozenset[Kind] = ALL_KINDS


@dataclass(frozen=True, slots=True)
class Learning:
    """Post-turn learning: off by default."""

    mode: LearningMode = LearningMode.OFF
    surfaces: frozenset[Surface] = LEARNING_SURFACES
    kinds: frozenset[Kind] = ALL_KINDS
    # P5: sensitive categories automatic mode may apply without review; none by default
    auto_apply: frozenset[SensitiveCategory] = frozenset()


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """One agent's memory configuration."""

    name: str
    tools: MemoryTools = field(default_factory=MemoryTools)
    learning: Learning = field(default_factory=Learning)

    @staticmethod
    def from_json(name: str, data: Any) -> AgentConfig:
        """Check a configuration given as Python data (JSON-shaped); any mistake is one
        sentence naming the setting."""
        check_agent_name(name)
        try:
            settings = validate_data(AgentConfigFile, data, "setting")
        except WireError as error:
            raise InvalidInput(f"The agent configuration is not valid: {error}.") from None
        return AgentConfig.from_settings(name, settings)

    @staticmethod
    def from_text(name: str, text: str | bytes, where: str = "The configuration") -> AgentConfig:
        """Check a configuration file's text: strict types, no unknown settings, bounded
        nesting and numbers, before anything is parsed into objects (model.wire)."""
        check_agent_name(name)
        try:
            settings = parse_json(AgentConfigFile, text, "setting")
        except WireError as error:
            raise InvalidInput(f"{where} is not a valid agent configuration: {error}.") from None
        return AgentConfig.from_settings(name, settings)

    @staticmethod
    def from_settings(name: str, settings: AgentConfigFile) -> AgentConfig:
        """The rules beyond the shape: the write scope (P3) and learning surfaces (P4)."""
        tools, learning = settings.memory.tools, settings.memory.learning
        if tools.write_scope != INVOCATION_USER:
            raise InvalidInput(
                "memory.tools.writeScope must be 'invocation-user': the person always comes "
                "from the host's trusted identity (P3)."
            )
        surfaces = LEARNING_SURFACES if learning.surfaces is None else frozenset(learning.surfaces)
        if not surfaces <= LEARNING_SURFACES:
            raise InvalidInput(
                "memory.learning.surfaces may list chat and channel only; tasks and schedules "
                "never create memory (P4)."
            )
        enabled = frozenset(s for s in TOOL_FOR_SETTING if getattr(tools, s))
        return AgentConfig(
            name,
            MemoryTools(enabled, tools.write_scope, _kinds(tools.writable_kinds)),
            Learning(
                LearningMode(learning.mode),
                surfaces,
                _kinds(learning.kinds),
                frozenset(learning.auto_apply_categories or ()),
            ),
        )

    def to_json(self) -> dict[str, Any]:
        """The configuration in the JSON shape it was given in (normalised)."""
        return {
            "memory": {
                "tools": {
                    **{s: s in self.tools.enabled for s in TOOL_FOR_SETTING},
                    "writeScope": self.tools.write_scope,
                    "writableKinds": sorted(self.tools.writable_kinds),
                },
                "learning": {
                    "mode": self.learning.mode.value,
                    "surfaces": sorted(self.learning.surfaces),
                    "kinds": sorted(self.learning.kinds),
                    "autoApplyCategories": sorted(self.learning.auto_apply),
                },
            }
        }

    def exposed_tools(self, host_allows: Collection[str]) -> list[str]:
        """P2: a memory tool is offered only when enabled here *and* allowed by the host's
        tool policy — the memory settings narrow, never widen."""
        return [
            tool
            for setting, tool in TOOL_FOR_SETTING.items()
            if setting in self.tools.enabled and tool in host_allows
        ]

    def require_remember(self) -> None:
        """New items enter an agent's memory only while `remember` is on — through the
        agent's memory_remember tool or the HTTP API alike. Correcting, forgetting and
        reading what is kept are never switched off."""
        if "remember" not in self.tools.enabled:
            start = f"Agent {self.name!r} takes no new items: memory.tools.remember is off"
            raise NotAllowed(
                f"{start} in its configuration.",
                cli_message=f"{start} in its configuration ('engram agents set').",
            )

    def require_writable(self, kind: Kind) -> Kind:
        """P2: an agent writes only the kinds its configuration lists."""
        if kind not in self.tools.writable_kinds:
            raise NotAllowed(f"This agent may not write {kind.value} notes.")
        return kind

    def learns_on(self, surface: Surface) -> bool:
        """P4: whether a turn on this surface may be analysed at all."""
        return (
            self.learning.mode is not LearningMode.OFF
            and surface in self.learning.surfaces
            and surface in LEARNING_SURFACES
        )


def auto_apply_sentence(config: AgentConfig) -> str:
    """What automatic learning may apply of the sensitive categories, in one sentence."""
    if config.learning.mode is not LearningMode.AUTOMATIC:
        return "Sensitive facts always wait for a person's review (learning is not automatic)."
    if not config.learning.auto_apply:
        return (
            "Sensitive facts always wait for a person's review; "
            "no category is applied automatically."
        )
    names = ", ".join(label(c) for c in sorted(config.learning.auto_apply))
    return (
        f"Sensitive facts wait for a person's review, except these, which are applied "
        f"automatically: {names}."
    )


def refuse_bad_combination(config: AgentConfig) -> AgentConfig:
    """Settings that each pass on their own but together do nothing or contradict
    themselves, refused when an agent is set (a file, the window's form): one sentence
    naming the setting. Only when setting: a stored configuration is never re-judged."""
    learning, tools = config.learning, config.tools
    on = learning.mode is not LearningMode.OFF
    if on and not learning.surfaces:
        raise InvalidInput(
            f"Learning is {learning.mode.value} but has no surface to learn on, so it would "
            "never learn; choose chat or channel, or turn learning off "
            "(memory.learning.surfaces)."
        )
    if on and not learning.kinds:
        raise InvalidInput(
            f"Learning is {learning.mode.value} but may learn no kind of note, so it would "
            "never learn; choose a kind, or turn learning off (memory.learning.kinds)."
        )
    if learning.auto_apply and learning.mode is not LearningMode.AUTOMATIC:
        raise InvalidInput(
            "Only automatic learning applies sensitive facts unreviewed; choose automatic, "
            "or clear the categories (memory.learning.autoApplyCategories)."
        )
    if "remember" in tools.enabled and not tools.writable_kinds:
        raise InvalidInput(
            "Remember is on but may write no kind of note, so it could keep nothing; choose "
            "a kind, or turn remember off (memory.tools.writableKinds)."
        )
    return config


def check_agent_name(name: str) -> str:
    """Agent names are short identifiers."""
    if not AGENT_NAME.fullmatch(name):
        raise InvalidInput(
            f"{name!r} is not an agent name; use letters, digits and . _ : - (120 at most)."
        )
    return name


def _kinds(listed: list[Kind] | None) -> frozenset[Kind]:
    return ALL_KINDS if listed is None else frozenset(listed)
