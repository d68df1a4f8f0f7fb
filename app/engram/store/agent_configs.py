"""Rows of the `agents` table: each agent's memory configuration as normalised JSON."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select

from engram.model.agents import AgentConfig
from engram.model.errors import CorruptStore, InvalidInput, changed_outside
from engram.store import schema
from engram.store.ledger_check import read_vouched
from engram.store.store import Store

A = schema.agents
H = schema.agent_config_history


def put(store: Store, conn: Connection, config: AgentConfig, at: int, actor: str) -> None:
    """Save (or replace) an agent's configuration; the history keeps every one."""
    data = json.dumps(config.to_json(), sort_keys=True)
    conn.execute(delete(A).where(A.c.name == config.name))
    conn.execute(insert(A).values(name=config.name, config=data, updated_at=at, updated_by=actor))
    last = conn.execute(select(func.max(H.c.at)).where(H.c.name == config.name)).scalar()
    moment = max(at, int(last) + 1) if last is not None else at  # one entry per instant
    conn.execute(insert(H).values(name=config.name, at=moment, config=data, actor=actor))
    store.touched(A, config.name)
    store.touched(H, config.name, moment)


def _damaged(name: str) -> CorruptStore:
    start = f"The stored configuration of agent {name!r} is damaged (changed outside Engram)"
    return CorruptStore(
        f"{start}; verify the store's integrity, then configure the agent again.",
        cli_message=f"{start}; run 'engram verify', then set it again with 'engram agents set'.",
    )


def _parsed(name: str, data: str) -> dict[str, Any]:
    try:
        parsed = json.loads(data)
    except (ValueError, TypeError, RecursionError):
        raise _damaged(name) from None
    if not isinstance(parsed, dict):
        raise _damaged(name)
    return parsed


def _config(name: str, data: str) -> AgentConfig:
    """A stored configuration, checked again: a bad one is damage, not the reader's mistake."""
    try:
        return AgentConfig.from_json(name, _parsed(name, data))
    except InvalidInput:
        raise _damaged(name) from None


def history(conn: Connection, name: str) -> list[tuple[int, str, dict[str, Any]]]:
    """Every configuration an agent has had, oldest first: (time, actor, configuration)."""
    rows = conn.execute(select(H).where(H.c.name == name).order_by(H.c.at))
    return [(int(r.at), r.actor, _parsed(name, r.config)) for r in rows]


def get(store: Store, conn: Connection, name: str) -> AgentConfig | None:
    """An agent's configuration, or None if it was never set. A row the signed ledger does
    not vouch for (changed, added or deleted outside Engram) is refused with
    ChangedOutsideEngram, so the runtime never acts on forged settings."""
    row, vouched = read_vouched(store.ledger_view, conn, A, A.c.name == name, (name,))
    if not vouched:
        raise changed_outside(
            f"The settings of agent {name!r} were changed outside Engram, so they are not used"
        )
    return None if row is None else _config(name, row["config"])


def every(conn: Connection) -> list[tuple[AgentConfig, int, str]]:
    """Every configured agent with when and by whom it was last set, by name."""
    rows = conn.execute(select(A).order_by(A.c.name))
    return [(_config(r.name, r.config), int(r.updated_at), r.updated_by) for r in rows]
