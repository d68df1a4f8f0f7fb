"""Rows of the `agents` table: each agent's memory configuration as normalised JSON."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select

from engram.model.agents import AgentConfig
from engram.store import schema

A = schema.agents
H = schema.agent_config_history


def put(conn: Connection, config: AgentConfig, at: int, actor: str) -> None:
    """Save (or replace) an agent's configuration; the history keeps every one."""
    data = json.dumps(config.to_json(), sort_keys=True)
    conn.execute(delete(A).where(A.c.name == config.name))
    conn.execute(insert(A).values(name=config.name, config=data, updated_at=at, updated_by=actor))
    last = conn.execute(select(func.max(H.c.at)).where(H.c.name == config.name)).scalar()
    moment = max(at, int(last) + 1) if last is not None else at  # one entry per instant
    conn.execute(insert(H).values(name=config.name, at=moment, config=data, actor=actor))


def history(conn: Connection, name: str) -> list[tuple[int, str, dict[str, Any]]]:
    """Every configuration an agent has had, oldest first: (time, actor, configuration)."""
    rows = conn.execute(select(H).where(H.c.name == name).order_by(H.c.at))
    return [(int(r.at), r.actor, json.loads(r.config)) for r in rows]


def get(conn: Connection, name: str) -> AgentConfig | None:
    """An agent's configuration, or None if it was never set."""
    data = conn.execute(select(A.c.config).where(A.c.name == name)).scalar()
    return None if data is None else AgentConfig.from_json(name, json.loads(data))


def every(conn: Connection) -> list[tuple[AgentConfig, int, str]]:
    """Every configured agent with when and by whom it was last set, by name."""
    rows = conn.execute(select(A).order_by(A.c.name))
    return [
        (AgentConfig.from_json(r.name, json.loads(r.config)), int(r.updated_at), r.updated_by)
        for r in rows
    ]
