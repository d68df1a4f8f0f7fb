"""Rows of the `agents` table: each agent's memory configuration as normalised JSON."""

from __future__ import annotations

import json

from sqlalchemy import Connection, delete, insert, select

from engram.model.agents import AgentConfig
from engram.store import schema

A = schema.agents


def put(conn: Connection, config: AgentConfig, at: int, actor: str) -> None:
    """Save (or replace) an agent's configuration."""
    conn.execute(delete(A).where(A.c.name == config.name))
    conn.execute(
        insert(A).values(
            name=config.name,
            config=json.dumps(config.to_json(), sort_keys=True),
            updated_at=at,
            updated_by=actor,
        )
    )


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
