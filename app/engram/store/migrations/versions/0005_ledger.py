"""The signed ledger of changes to the tables outside the chains; existing rows are
recorded in its first entry, signed with the store's key. A conversation's creation time
becomes that of its signed creation entry (microseconds apart), so verify can recompute it.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

# The tables the ledger covers as of this revision.
RECORDED = ("store_info", "persons", "data_keys", "agents", "agent_config_history", "api_keys")


def upgrade() -> None:
    op.create_table(
        "ledger",
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("at", sa.BigInteger, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("prev_hash", sa.LargeBinary, nullable=False),
        sa.Column("entry_hash", sa.LargeBinary, nullable=False),
        sa.Column("signature", sa.LargeBinary, nullable=False),
    )
    op.execute(
        "UPDATE conversations SET created_at = (SELECT l.at FROM conversation_log l "
        "WHERE l.conversation = conversations.id AND l.seq = 1) WHERE EXISTS (SELECT 1 FROM "
        "conversation_log l WHERE l.conversation = conversations.id AND l.seq = 1)"
    )
    bind = op.get_bind()
    if not any(bind.execute(sa.text(f"SELECT 1 FROM {t} LIMIT 1")).first() for t in RECORDED):
        return  # a new store: its first write records its rows
    record_every_row = context.config.attributes.get("record_every_row")
    if record_every_row is None:
        # Trust on first use needs the signing key: only an unlocked store can do this step.
        raise RuntimeError("revision 0005 records existing rows and needs the unlocked store")
    record_every_row(bind)


def downgrade() -> None:
    op.drop_table("ledger")
