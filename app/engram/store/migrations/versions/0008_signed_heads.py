"""Signed chain heads (issue 19): one signature per write over each chain's head, instead
of one per entry. The head of every existing chain is signed here with the store's key;
the entries' own signatures stay, and verify still checks them.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

CHAINED = ("journal", "conversation_log", "erasures", "ledger")


def upgrade() -> None:
    op.create_table(
        "chain_heads",
        sa.Column("chain", sa.String(64), primary_key=True),
        sa.Column("length", sa.BigInteger, nullable=False),
        sa.Column("head", sa.LargeBinary, nullable=False),
        sa.Column("at", sa.BigInteger, nullable=False),
        sa.Column("signature", sa.LargeBinary, nullable=False),
    )
    bind = op.get_bind()
    if not any(bind.execute(sa.text(f"SELECT 1 FROM {t} LIMIT 1")).first() for t in CHAINED):
        return  # a new store: its first write signs its heads
    sign_heads = context.config.attributes.get("sign_heads")
    if sign_heads is None:
        # Signing needs the signing key: only an unlocked store can do this step.
        raise RuntimeError("revision 0008 signs the existing heads and needs the unlocked store")
    sign_heads(bind)


def downgrade() -> None:
    op.drop_table("chain_heads")
