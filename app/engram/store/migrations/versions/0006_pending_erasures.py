"""Pending erasures: the mark an erasure leaves until its bytes are gone from the files.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pending_erasures",
        sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("at", sa.BigInteger, nullable=False),
        sa.Column("probes", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("pending_erasures")
