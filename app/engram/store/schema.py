"""Tables. Which columns are clear and which are sealed is the privacy contract:

Clear (queryable, chained): ids, sequence numbers, times (microseconds since the epoch),
actors, event types, scopes, kinds, statuses, confidences, conversation surfaces and flags.
Sealed (XChaCha20-Poly1305 under a data key): every free text — note text, reasons,
message and tool content, candidate content, profile documents, digest lines, person names.

Chained headers (`journal`, `conversation_log`, `erasures`, `ledger`) are kept apart from
their deletable payload rows (`journal_payloads`, `log_payloads`); a header commits only to
its payload's hash.

How every table is protected against a change made behind Engram's back is declared in
`PROTECTION` below (a test checks that it names every table in `metadata`):

=========  ===============================================================================
chained    hash-chained rows under a signed head (`chain_heads`; rows written before
           issue 19 are each signed too); `verify` walks each chain (and the checkpoint
           outside the database holds each chain's length and head).
payload    sealed text whose hash a chained row commits to.
ledger     each row's keyed digest is recorded, change by change, in the signed `ledger`
           chain; `verify` replays the ledger and compares every row (a changed, deleted,
           inserted or replayed row is reported).
derived    recomputed by `verify` and compared: the fold's projection against a replay
           of the journal, a conversation's row and readers against its log.
signed     each row is the store key's signature over one chain's length and head hash;
           `verify` checks it against the walked chain (a row changed, deleted or added,
           or entries past the signed length, are reported).
=========  ===============================================================================

`alembic_version` (Alembic's own table, outside `metadata`) must name a revision this code
knows: opening refuses a missing or unknown one in one sentence, and `verify` compares it
with the newest revision.

Why a ledger and not a signature per row: a per-row signature can be replayed — an
attacker with write access but no key could put back a row's older, validly signed value
(a revoked API key reinstated, an agent's earlier learning mode). The ledger is a chain,
so the latest recorded digest of every row is known, and its head is in the checkpoint,
so cutting its tail is a rollback `verify` reports. Its entries name rows and hold
digests only through a key derived from the signing key, so no id survives an erasure
in clear.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    text,
)

FORMAT_VERSION = 1

metadata = MetaData()

ID = String(80)

store_info = Table(
    "store_info",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("format_version", Integer, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("kdf", Text, nullable=True),
    Column("salt", LargeBinary, nullable=True),
    Column("kek_by_passphrase", LargeBinary, nullable=True),
    Column("keyring_backend", String(200), nullable=True),
    Column("sealed_signing_seed", LargeBinary, nullable=False),
    Column("verify_key", LargeBinary, nullable=False),
    Column("checksum", LargeBinary, nullable=False),
)

data_keys = Table(
    "data_keys",
    metadata,
    Column("key_ref", String(120), primary_key=True),
    Column("wrapped", LargeBinary, nullable=False),
    Column("created_at", BigInteger, nullable=False),
)

persons = Table(
    "persons",
    metadata,
    Column("id", ID, primary_key=True),
    Column("created_at", BigInteger, nullable=False),
    Column("sealed_name", LargeBinary, nullable=True),
)

journal = Table(
    "journal",
    metadata,
    Column("person", ID, primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("at", BigInteger, nullable=False),
    Column("actor", String(120), nullable=False),
    Column("type", String(40), nullable=False),
    Column("cause_conversation", ID, nullable=True),
    Column("cause_turn", ID, nullable=True),
    Column("body", Text, nullable=False),
    Column("key_ref", String(120), nullable=True),
    Column("payload_hash", LargeBinary, nullable=True),
    Column("prev_hash", LargeBinary, nullable=False),
    Column("entry_hash", LargeBinary, nullable=False),
    Column("signature", LargeBinary, nullable=False),
    Index("ix_journal_at", "person", "at"),
)

journal_payloads = Table(
    "journal_payloads",
    metadata,
    Column("person", ID, primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("sealed", LargeBinary, nullable=False),
)

person_state = Table(
    "person_state",
    metadata,
    Column("person", ID, primary_key=True),
    Column("seq", BigInteger, nullable=False),
    Column("profile_seq", BigInteger, nullable=True),
)

note_state = Table(
    "note_state",
    metadata,
    Column("person", ID, primary_key=True),
    Column("id", ID, primary_key=True),
    Column("kind", String(20), nullable=False),
    Column("scope", String(20), nullable=False),
    Column("status", String(20), nullable=False),
    Column("origin", ID, nullable=True),
    Column("confidence_bp", Integer, nullable=False),
    Column("last_source_at", BigInteger, nullable=False),
    Column("valid_from", BigInteger, nullable=False),
    Column("valid_to", BigInteger, nullable=True),
    Column("created_seq", BigInteger, nullable=False),
    Column("data", Text, nullable=False),
    # Ranking order, column for column (confidence and last source descending), so a first
    # page is an index walk whatever the store's size: by status, and across all statuses.
    Index(
        "ix_note_rank",
        "person",
        "status",
        text("confidence_bp DESC"),
        text("last_source_at DESC"),
        "valid_from",
        "id",
    ),
    Index(
        "ix_note_rank_all",
        "person",
        text("confidence_bp DESC"),
        text("last_source_at DESC"),
        "valid_from",
        "id",
    ),
    Index(
        "ix_note_scope_rank",
        "person",
        "status",
        "scope",
        text("confidence_bp DESC"),
        text("last_source_at DESC"),
        "valid_from",
        "id",
    ),
    Index(
        "ix_note_kind_rank",  # a turn's profile and other notes, by kind (issue 19 item 4)
        "person",
        "status",
        "scope",
        "kind",
        text("confidence_bp DESC"),
        text("last_source_at DESC"),
        "valid_from",
        "id",
    ),
    Index("ix_note_created", "person", "created_seq"),
    Index("ix_note_origin", "person", "origin"),
)

# How many notes a person has by status, scope and kind: counts without walking an index.
note_counts = Table(
    "note_counts",
    metadata,
    Column("person", ID, primary_key=True),
    Column("status", String(20), primary_key=True),
    Column("scope", String(20), primary_key=True),
    Column("kind", String(20), primary_key=True),
    Column("n", BigInteger, nullable=False),
)

note_sources = Table(
    "note_sources",
    metadata,
    Column("person", ID, primary_key=True),
    Column("note", ID, primary_key=True),
    Column("conversation", ID, primary_key=True),
    Index("ix_note_sources_conversation", "person", "conversation"),
)

digest_lines = Table(
    "digest_lines",
    metadata,
    Column("person", ID, primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("at", BigInteger, nullable=False),
    Column("conversation", ID, nullable=True),
    Column("scope", String(20), nullable=False),
)

processed_turns = Table(
    "processed_turns",
    metadata,
    Column("person", ID, primary_key=True),
    Column("conversation", ID, primary_key=True),
    Column("turn", ID, primary_key=True),
)

usage = Table(
    "usage",
    metadata,
    Column("person", ID, primary_key=True),
    Column("note", ID, primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("at", BigInteger, nullable=False),
    Column("via", String(40), nullable=False),
    Column("rank", Integer, nullable=False),
    Column("conversation", ID, nullable=True),
    Column("turn", ID, nullable=True),
)

candidates = Table(
    "candidates",
    metadata,
    Column("person", ID, primary_key=True),
    Column("id", ID, primary_key=True),
    Column("revision", Integer, nullable=False),
    Column("status", String(20), nullable=False),
    Column("payload_seq", BigInteger, nullable=False),
    Column("kind", String(20), nullable=False),
    Column("scope", String(20), nullable=False),
    Column("note", ID, nullable=True),
)

deleted_conversations = Table(
    "deleted_conversations",
    metadata,
    Column("person", ID, primary_key=True),
    Column("conversation", ID, primary_key=True),
)

conversations = Table(
    "conversations",
    metadata,
    Column("id", ID, primary_key=True),
    Column("created_at", BigInteger, nullable=False),
    Column("surface", String(20), nullable=False),
    Column("incognito", Boolean, nullable=False),
    Column("agent", String(120), nullable=True),
)

conversation_participants = Table(
    "conversation_participants",
    metadata,
    Column("conversation", ID, primary_key=True),
    Column("person", ID, primary_key=True),
    Index("ix_participants_person", "person"),
)

conversation_log = Table(
    "conversation_log",
    metadata,
    Column("conversation", ID, primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("at", BigInteger, nullable=False),
    Column("entry", String(20), nullable=False),
    Column("ref", ID, nullable=True),
    Column("author", ID, nullable=True),
    Column("status", String(20), nullable=True),
    Column("body", Text, nullable=False),
    Column("payload_hash", LargeBinary, nullable=True),
    Column("prev_hash", LargeBinary, nullable=False),
    Column("entry_hash", LargeBinary, nullable=False),
    Column("signature", LargeBinary, nullable=False),
    Index("ix_log_ref", "conversation", "ref"),
)

log_payloads = Table(
    "log_payloads",
    metadata,
    Column("conversation", ID, primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("sealed", LargeBinary, nullable=False),
)

erasures = Table(
    "erasures",
    metadata,
    Column("seq", BigInteger, primary_key=True, autoincrement=False),
    Column("at", BigInteger, nullable=False),
    Column("actor", String(120), nullable=False),
    Column("body", Text, nullable=False),
    Column("prev_hash", LargeBinary, nullable=False),
    Column("entry_hash", LargeBinary, nullable=False),
    Column("signature", LargeBinary, nullable=False),
)

# Erasures whose bytes may still be in the database file or its WAL (a reader of an older
# snapshot held them, or the process died first): a to-do list, not a record. `probes` are
# the last bytes of each erased ciphertext, sealed under a data key of their own, so the
# next open can prove the files clean; the row and its key go when it does. Verify reports
# every row; the ledger covers them, so a mark deleted behind Engram's back is reported too.
pending_erasures = Table(
    "pending_erasures",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("at", BigInteger, nullable=False),
    Column("probes", LargeBinary, nullable=False),
)

# Per-agent memory configuration (P2): clear — settings, not anything said by anyone.
agents = Table(
    "agents",
    metadata,
    Column("name", String(120), primary_key=True),
    Column("config", Text, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("updated_by", String(120), nullable=False),
)

# Project API keys for the HTTP face: only a keyed hash of each key is kept.
api_keys = Table(
    "api_keys",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("key_hash", String(128), nullable=False, unique=True),
    Column("label", String(120), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("created_by", String(120), nullable=False),
    Column("revoked_at", BigInteger, nullable=True),
)

# Every configuration an agent has had, with who set it and when (the audit of `agents set`).
agent_config_history = Table(
    "agent_config_history",
    metadata,
    Column("name", String(120), primary_key=True),
    Column("at", BigInteger, primary_key=True),
    Column("config", Text, nullable=False),
    Column("actor", String(120), nullable=False),
)

# The signed record of every change to the tables that live outside the chains (see above).
ledger = Table(
    "ledger",
    metadata,
    Column("seq", BigInteger, primary_key=True, autoincrement=False),
    Column("at", BigInteger, nullable=False),
    Column("body", Text, nullable=False),
    Column("prev_hash", LargeBinary, nullable=False),
    Column("entry_hash", LargeBinary, nullable=False),
    Column("signature", LargeBinary, nullable=False),
)

# The signed head of every chain (issue 19): one Ed25519 signature per write transaction
# over each chain it touched — its length and head hash, like a transparency log's signed
# tree head (RFC 9162) — instead of one per entry. `chain` is the chain id's keyed hash
# (`Store.hidden_name`), so no person or conversation id is in clear; `at` is when it was
# signed. Entries past `length` are an unsigned tail, which `verify` reports.
chain_heads = Table(
    "chain_heads",
    metadata,
    Column("chain", String(64), primary_key=True),
    Column("length", BigInteger, nullable=False),
    Column("head", LargeBinary, nullable=False),
    Column("at", BigInteger, nullable=False),
    Column("signature", LargeBinary, nullable=False),
)

# Clear columns that can name a person as the one who did something (an actor or author).
# A person can be one (acting on their own memory, or given as `--actor`), so erasing them
# renames their id to their keyed pseudonym in each — chained rows in `store/erasure.py`,
# ledger rows in `store/erasure_admin.py` — and verify reports a pseudonym in any of them
# that no erasure record explains. No other clear column holds an actor: a candidate's
# review is a journal event (its actor is `journal.actor`), usage, store info and pending
# erasures name no one, and a person's own rows (`person` columns) go with them.
ACTOR_COLUMNS: tuple[Column[Any], ...] = (
    journal.c.actor,
    conversation_log.c.author,
    erasures.c.actor,
    agents.c.updated_by,
    agent_config_history.c.actor,
    api_keys.c.created_by,
)


class Protection(StrEnum):
    """How `verify` notices a change to a table's rows made behind Engram's back."""

    CHAINED = "chained"
    PAYLOAD = "payload"
    LEDGER = "ledger"
    DERIVED = "derived"
    SIGNED = "signed"


PROTECTION: dict[str, Protection] = {
    "journal": Protection.CHAINED,
    "conversation_log": Protection.CHAINED,
    "erasures": Protection.CHAINED,
    "ledger": Protection.CHAINED,
    "chain_heads": Protection.SIGNED,
    "journal_payloads": Protection.PAYLOAD,
    "log_payloads": Protection.PAYLOAD,
    "store_info": Protection.LEDGER,
    "persons": Protection.LEDGER,
    "data_keys": Protection.LEDGER,
    "agents": Protection.LEDGER,
    "agent_config_history": Protection.LEDGER,
    "api_keys": Protection.LEDGER,
    "pending_erasures": Protection.LEDGER,
    "person_state": Protection.DERIVED,
    "note_state": Protection.DERIVED,
    "note_counts": Protection.DERIVED,
    "note_sources": Protection.DERIVED,
    "digest_lines": Protection.DERIVED,
    "processed_turns": Protection.DERIVED,
    "usage": Protection.DERIVED,
    "candidates": Protection.DERIVED,
    "deleted_conversations": Protection.DERIVED,
    "conversations": Protection.DERIVED,
    "conversation_participants": Protection.DERIVED,
}

# The ledger's tables, in the order their rows are checked.
LEDGER_TABLES: tuple[Table, ...] = tuple(
    metadata.tables[name] for name, how in PROTECTION.items() if how is Protection.LEDGER
)
