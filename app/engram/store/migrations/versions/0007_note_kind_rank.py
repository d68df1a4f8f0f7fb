"""Notes ranked within one scope and kind: a turn's profile (preferences and style) and its
other notes are found by this index, not by reading past the notes of other kinds
(issue 19 item 4).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    rank: list[str | sa.TextClause] = [
        sa.text("confidence_bp DESC"),
        sa.text("last_source_at DESC"),
        "valid_from",
        "id",
    ]
    op.create_index("ix_note_kind_rank", "note_state", ["person", "status", "scope", "kind", *rank])


def downgrade() -> None:
    op.drop_index("ix_note_kind_rank", "note_state")
