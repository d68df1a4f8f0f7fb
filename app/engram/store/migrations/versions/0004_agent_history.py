"""Every configuration an agent has had (the audit of `engram agents set`).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_config_history",
        sa.Column("name", sa.String(120), primary_key=True),
        sa.Column("at", sa.BigInteger, primary_key=True),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("actor", sa.String(120), nullable=False),
    )
    # what each configured agent holds now is the first entry of its history
    op.execute(
        "INSERT INTO agent_config_history (name, at, config, actor) "
        "SELECT name, updated_at, config, updated_by FROM agents"
    )


def downgrade() -> None:
    op.drop_table("agent_config_history")
