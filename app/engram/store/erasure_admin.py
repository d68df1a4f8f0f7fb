"""An erased person in the admin tables outside the chains: who set an agent's memory
configuration (`agents.updated_by`, `agent_config_history.actor`) and who created a project
API key (`api_keys.created_by`).

These rows must outlive the person — they are the store's configuration and its audit, not
the person's memory — so the erase renames the person in them to their keyed pseudonym
within the erase's transaction, and marks every renamed row touched: that commit's signed
ledger entry records each row's new content exactly as for any other write, and verify
keeps comparing every row with the ledger.

An API key the person created stays valid and only its creator reads as the pseudonym. The
key belongs to the project that calls the HTTP face (a caller acts as `api:<key id>`, never
as the key's creator), so revoking it as a side effect of an erase would break a service
without saying so; an operator who wants it gone revokes it (`engram keys revoke`).
"""

from __future__ import annotations

from sqlalchemy import select, update

from engram.model.ids import PersonId
from engram.store import pseudonyms, schema
from engram.store.store import Store, WriteTxn

# The actor columns of tables the ledger covers (the chained ones are renamed in erasure.py).
LEDGER_ACTOR_COLUMNS = tuple(
    column
    for column in schema.ACTOR_COLUMNS
    if schema.PROTECTION[column.table.name] is schema.Protection.LEDGER
)


def pseudonymize_admin(store: Store, txn: WriteTxn, person: PersonId) -> int:
    """Rename an erased person to their pseudonym wherever they administered something, each
    row re-recorded in the signed ledger; returns how many rows were renamed."""
    conn = txn.conn
    alias = pseudonyms.pseudonym(store, person)
    renamed = 0
    for column in LEDGER_ACTOR_COLUMNS:
        table = column.table
        keys = list(table.primary_key.columns)
        rows = conn.execute(select(*keys).where(column == person)).all()
        if not rows:
            continue
        conn.execute(update(table).where(column == person).values({column.name: alias}))
        for row in rows:
            store.touched(table, *row)
        renamed += len(rows)
    return renamed
