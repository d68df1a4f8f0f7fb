"""Agents' memory configurations (P2): set by an operator, read by the runtime."""

from __future__ import annotations

from typing import Any

from engram.model.agents import AgentConfig, check_agent_name, refuse_bad_combination
from engram.model.clock import from_micros
from engram.model.errors import NotFound
from engram.store import agent_configs
from engram.store.store import Store


def set_agent(store: Store, name: str, data: Any, actor: str) -> AgentConfig:
    """Check and save an agent's configuration given as Python data; returns it normalised."""
    return _save(store, AgentConfig.from_json(name, data), actor)


def set_agent_config(store: Store, config: AgentConfig, actor: str) -> AgentConfig:
    """Check and save typed settings (the window's form): they pass through the same checks
    as a file's (shape, P3, P4, combinations), so a form can set nothing a file could not."""
    return set_agent(store, config.name, config.to_json(), actor)


def set_agent_from_file(
    store: Store, name: str, text: str | bytes, actor: str, where: str
) -> AgentConfig:
    """Check and save a configuration file's text (strict: model.wire); `where` names the
    file in a refusal."""
    return _save(store, AgentConfig.from_text(name, text, where), actor)


def _save(store: Store, config: AgentConfig, actor: str) -> AgentConfig:
    refuse_bad_combination(config)
    with store.write() as txn:
        agent_configs.put(store, txn.conn, config, store.now_micros(), actor)
    return config


def agent_config(store: Store, name: str | None) -> AgentConfig:
    """An agent's configuration; an agent never configured (or none) has everything off."""
    if name is None:
        return AgentConfig("unnamed")
    check_agent_name(name)
    with store.read() as conn:
        return agent_configs.get(store, conn, name) or AgentConfig(name)


def list_agents(store: Store) -> list[dict[str, Any]]:
    """Every configured agent, for `engram agents list`."""
    with store.read() as conn:
        rows = agent_configs.every(conn)
    return [
        {
            "name": config.name,
            "updated_at": from_micros(at).isoformat(),
            "updated_by": by,
            **config.to_json(),
        }
        for config, at, by in rows
    ]


def require_agent(store: Store, name: str) -> AgentConfig:
    """A configured agent's settings; NotFound for a name never configured."""
    check_agent_name(name)
    with store.read() as conn:
        config = agent_configs.get(store, conn, name)
    if config is None:
        raise NotFound(
            f"There is no configured agent {name!r}; configure it first.",
            cli_message=f"There is no configured agent {name!r}; set it with 'engram agents set'.",
        )
    return config


def agent_history(store: Store, name: str) -> list[dict[str, Any]]:
    """Who set which configuration for an agent, and when (oldest first)."""
    check_agent_name(name)
    with store.read() as conn:
        rows = agent_configs.history(conn, name)
    if not rows:
        raise NotFound(f"There is no configured agent {name!r}.")
    return [{"at": from_micros(at).isoformat(), "by": by, **config} for at, by, config in rows]
