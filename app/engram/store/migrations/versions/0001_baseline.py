"""Baseline: format version 1.

Frozen on purpose: later schema changes are new revisions, never edits here. A test checks
that upgrading to head yields exactly engram.store.schema.metadata.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

ID = sa.String(80)


def _chain_columns() -> list[sa.Column[object]]:
    return [
        sa.Column("payload_hash", sa.LargeBinary, nullable=True),
        sa.Column("prev_hash", sa.LargeBinary, nullable=False),
        sa.Column("entry_hash", sa.LargeBinary, nullable=False),
        sa.Column("signature", sa.LargeBinary, nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "store_info",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("format_version", sa.Integer, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("kdf", sa.Text, nullable=True),
        sa.Column("salt", sa.LargeBinary, nullable=True),
        sa.Column("kek_by_passphrase", sa.LargeBinary, nullable=True),
        sa.Column("keyring_backend", sa.String(200), nullable=True),
        sa.Column("sealed_signing_seed", sa.LargeBinary, nullable=False),
        sa.Column("verify_key", sa.LargeBinary, nullable=False),
        sa.Column("checksum", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "data_keys",
        sa.Column("key_ref", sa.String(120), primary_key=True),
        sa.Column("wrapped", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "persons",
        sa.Column("id", ID, primary_key=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("sealed_name", sa.LargeBinary, nullable=True),
    )
    op.create_table(
        "journal",
        sa.Column("person", ID, primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True),
        sa.Column("at", sa.BigInteger, nullable=False),
        sa.Column("actor", sa.String(120), nullable=False),
        sa.Column("type", sa.String(40), nullable=False),
        sa.Column("cause_conversation", ID, nullable=True),
        sa.Column("cause_turn", ID, nullable=True),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("key_ref", sa.String(120), nullable=True),
        *_chain_columns(),
    )
    op.create_index("ix_journal_at", "journal", ["person", "at"])
    op.create_table(
        "journal_payloads",
        sa.Column("person", ID, primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True),
        sa.Column("sealed", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "person_state",
        sa.Column("person", ID, primary_key=True),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("profile_seq", sa.BigInteger, nullable=True),
    )
    op.create_table(
        "note_state",
        sa.Column("person", ID, primary_key=True),
        sa.Column("id", ID, primary_key=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("scope", sa.String(20), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("origin", ID, nullable=True),
        sa.Column("confidence_bp", sa.Integer, nullable=False),
        sa.Column("last_source_at", sa.BigInteger, nullable=False),
        sa.Column("valid_from", sa.BigInteger, nullable=False),
        sa.Column("valid_to", sa.BigInteger, nullable=True),
        sa.Column("created_seq", sa.BigInteger, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
    )
    rank: list[str | sa.TextClause] = [
        sa.text("confidence_bp DESC"),
        sa.text("last_source_at DESC"),
        "valid_from",
        "id",
    ]
    op.create_index("ix_note_rank", "note_state", ["person", "status", *rank])
    op.create_index("ix_note_rank_all", "note_state", ["person", *rank])
    op.create_index("ix_note_scope_rank", "note_state", ["person", "status", "scope", *rank])
    op.create_index("ix_note_created", "note_state", ["person", "created_seq"])
    op.create_index("ix_note_origin", "note_state", ["person", "origin"])
    op.create_table(
        "note_counts",
        sa.Column("person", ID, primary_key=True),
        sa.Column("status", sa.String(20), primary_key=True),
        sa.Column("scope", sa.String(20), primary_key=True),
        sa.Column("kind", sa.String(20), primary_key=True),
        sa.Column("n", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "note_sources",
        sa.Column("person", ID, primary_key=True),
        sa.Column("note", ID, primary_key=True),
        sa.Column("conversation", ID, primary_key=True),
    )
    op.create_index("ix_note_sources_conversation", "note_sources", ["person", "conversation"])
    op.create_table(
        "digest_lines",
        sa.Column("person", ID, primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True),
        sa.Column("at", sa.BigInteger, nullable=False),
        sa.Column("conversation", ID, nullable=True),
        sa.Column("scope", sa.String(20), nullable=False),
    )
    op.create_table(
        "processed_turns",
        sa.Column("person", ID, primary_key=True),
        sa.Column("conversation", ID, primary_key=True),
        sa.Column("turn", ID, primary_key=True),
    )
    op.create_table(
        "usage",
        sa.Column("person", ID, primary_key=True),
        sa.Column("note", ID, primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True),
        sa.Column("at", sa.BigInteger, nullable=False),
        sa.Column("via", sa.String(40), nullable=False),
        sa.Column("rank", sa.Integer, nullable=False),
        sa.Column("conversation", ID, nullable=True),
        sa.Column("turn", ID, nullable=True),
    )
    op.create_table(
        "candidates",
        sa.Column("person", ID, primary_key=True),
        sa.Column("id", ID, primary_key=True),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("payload_seq", sa.BigInteger, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("scope", sa.String(20), nullable=False),
        sa.Column("note", ID, nullable=True),
    )
    op.create_table(
        "deleted_conversations",
        sa.Column("person", ID, primary_key=True),
        sa.Column("conversation", ID, primary_key=True),
    )
    op.create_table(
        "conversations",
        sa.Column("id", ID, primary_key=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("surface", sa.String(20), nullable=False),
        sa.Column("incognito", sa.Boolean, nullable=False),
        sa.Column("agent", sa.String(120), nullable=True),
    )
    op.create_table(
        "conversation_participants",
        sa.Column("conversation", ID, primary_key=True),
        sa.Column("person", ID, primary_key=True),
    )
    op.create_index("ix_participants_person", "conversation_participants", ["person"])
    op.create_table(
        "conversation_log",
        sa.Column("conversation", ID, primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True),
        sa.Column("at", sa.BigInteger, nullable=False),
        sa.Column("entry", sa.String(20), nullable=False),
        sa.Column("ref", ID, nullable=True),
        sa.Column("author", ID, nullable=True),
        sa.Column("status", sa.String(20), nullable=True),
        sa.Column("body", sa.Text, nullable=False),
        *_chain_columns(),
    )
    op.create_index("ix_log_ref", "conversation_log", ["conversation", "ref"])
    op.create_table(
        "log_payloads",
        sa.Column("conversation", ID, primary_key=True),
        sa.Column("seq", sa.BigInteger, primary_key=True),
        sa.Column("sealed", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "erasures",
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("at", sa.BigInteger, nullable=False),
        sa.Column("actor", sa.String(120), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("prev_hash", sa.LargeBinary, nullable=False),
        sa.Column("entry_hash", sa.LargeBinary, nullable=False),
        sa.Column("signature", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    for table in (
        "erasures",
        "log_payloads",
        "conversation_log",
        "conversation_participants",
        "conversations",
        "deleted_conversations",
        "candidates",
        "usage",
        "processed_turns",
        "digest_lines",
        "note_sources",
        "note_counts",
        "note_state",
        "person_state",
        "journal_payloads",
        "journal",
        "persons",
        "data_keys",
        "store_info",
    ):
        op.drop_table(table)
