"""Project API keys for the HTTP face (only keyed hashes are stored).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("key_hash", sa.String(128), nullable=False, unique=True),
        sa.Column("label", sa.String(120), nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("created_by", sa.String(120), nullable=False),
        sa.Column("revoked_at", sa.BigInteger, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("api_keys")
