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
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from engram.model.conversation import Surface
from engram.model.errors import InvalidInput, NotAllowed
from engram.model.scope import Kind

E = TypeVar("E", bound=StrEnum)
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


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """One agent's memory configuration."""

    name: str
    tools: MemoryTools = field(default_factory=MemoryTools)
    learning: Learning = field(default_factory=Learning)

    @staticmethod
    def from_json(name: str, data: Any) -> AgentConfig:
        """Parse and check a configuration; any mistake is one sentence naming the field."""
        check_agent_name(name)
        memory = _object(_object(data, "the configuration").get("memory", {}), "memory")
        _known(memory, {"tools", "learning"}, "memory")
        tools = _object(memory.get("tools", {}), "memory.tools")
        _known(tools, {*TOOL_FOR_SETTING, "writeScope", "writableKinds"}, "memory.tools")
        enabled = frozenset(s for s in TOOL_FOR_SETTING if _flag(tools, s, "memory.tools"))
        write_scope = tools.get("writeScope", INVOCATION_USER)
        if write_scope != INVOCATION_USER:
            raise InvalidInput(
                "memory.tools.writeScope must be 'invocation-user': the person always comes "
                "from the host's trusted identity (P3)."
            )
        learning = _object(memory.get("learning", {}), "memory.learning")
        _known(learning, {"mode", "surfaces", "kinds"}, "memory.learning")
        mode = _choice(learning.get("mode", "off"), LearningMode, "memory.learning.mode")
        surfaces = _choices(
            learning.get("surfaces", sorted(LEARNING_SURFACES)), Surface, "memory.learning.surfaces"
        )
        if not surfaces <= LEARNING_SURFACES:
            raise InvalidInput(
                "memory.learning.surfaces may list chat and channel only; tasks and schedules "
                "never create memory (P4)."
            )
        return AgentConfig(
            name,
            MemoryTools(
                enabled,
                write_scope,
                _choices(tools.get("writableKinds", sorted(ALL_KINDS)), Kind, "writableKinds"),
            ),
            Learning(
                mode,
                surfaces,
                _choices(learning.get("kinds", sorted(ALL_KINDS)), Kind, "memory.learning.kinds"),
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
            raise NotAllowed(
                f"Agent {self.name!r} takes no new items: memory.tools.remember is off in its "
                "configuration ('engram agents set')."
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


def check_agent_name(name: str) -> str:
    """Agent names are short identifiers."""
    if not AGENT_NAME.match(name):
        raise InvalidInput(
            f"{name!r} is not an agent name; use letters, digits and . _ : - (120 at most)."
        )
    return name


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{where} must be a JSON object.")
    return value


def _known(value: Mapping[str, Any], allowed: Collection[str], where: str) -> None:
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise InvalidInput(f"{where} has unknown settings: {', '.join(unknown)}.")


def _flag(value: Mapping[str, Any], key: str, where: str) -> bool:
    flag = value.get(key, False)
    if not isinstance(flag, bool):
        raise InvalidInput(f"{where}.{key} must be true or false.")
    return flag


def _choice(value: Any, enum: type[E], where: str) -> E:
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(member.value for member in enum)
        raise InvalidInput(f"{where} must be one of: {allowed}.") from None


def _choices(value: Any, enum: type[E], where: str) -> frozenset[E]:
    if not isinstance(value, list):
        raise InvalidInput(f"{where} must be a list.")
    return frozenset(_choice(item, enum, where) for item in value)
