"""Whether learning may draw on a conversation (P2, P4, W7), and one learner per person
(W5): what the extraction pass and the digest pass (M4) both obey."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from engram.model.agents import AgentConfig, LearningMode
from engram.model.conversation import ConversationInfo
from engram.model.ids import PersonId
from engram.store import agent_configs
from engram.store.store import Store


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """What the host allows, above any agent's saved settings (P4: a kill switch wins)."""

    learning: bool = True


# W5: one pass per person at a time in this process; across processes, a pass whose notes
# changed underneath it starts again instead of writing on a stale view.
_locks: dict[tuple[str, PersonId], threading.Lock] = {}
_locks_guard = threading.Lock()


def person_lock(store: Store, person: PersonId) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault((store.info.id, person), threading.Lock())


def config_of(store: Store, conn: Any, info: ConversationInfo) -> AgentConfig | None:
    """The conversation's agent configuration; None when it has no configured agent."""
    return agent_configs.get(store, conn, info.agent) if info.agent else None


def learning_refusal(
    store: Store, info: ConversationInfo, host: HostPolicy = HostPolicy()
) -> str | None:
    """Why learning leaves this conversation alone (P2, P4, W7), or None when its
    committed turns will be learned from."""
    with store.read() as conn:
        return why_not(info, config_of(store, conn, info), host)


def learning_allowed(
    store: Store, conn: Any, info: ConversationInfo, host: HostPolicy = HostPolicy()
) -> bool:
    """Whether learning may draw on this conversation at all (P2, P4, W7)."""
    return why_not(info, config_of(store, conn, info), host) is None


def why_not(info: ConversationInfo, config: AgentConfig | None, host: HostPolicy) -> str | None:
    """Why learning leaves a conversation alone (P4, W7), or None when it may learn there."""
    if not host.learning:
        return "the host has turned learning off"
    if info.incognito:
        return "the conversation is incognito"  # W7
    if config is None:
        who = f"its agent {info.agent!r} is not configured" if info.agent else "it has no agent"
        return (
            f"{who}, so learning is off (the default); an agent's configuration turns it on "
            "('engram agents set NAME --config FILE.json', memory.learning.mode)"
        )
    if config.learning.mode is LearningMode.OFF:
        return f"learning is off for agent {config.name!r}"
    if not config.learns_on(info.surface):
        return f"agent {config.name!r} does not learn on {info.surface.value} conversations"
    return None
