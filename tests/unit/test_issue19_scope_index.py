"""Issue 19 item 4: a shared audience's notes are found by an index, not by reading past
private ones — the plan of the prompt-facing read walks ix_note_scope_rank in ranking
order, with no sort of its own, whatever the store's size."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects import sqlite

from engram.control import persons
from engram.model.notes import NoteStatus
from engram.model.scope import Scope
from engram.store.projection_notes import RANK_ORDER
from engram.store.schema import note_state as N
from engram.store.store import Store


def _plan(store: Store, scopes: list[Scope]) -> str:
    query = (
        select(N.c.data)
        .where(
            N.c.person == "ana",
            N.c.status == NoteStatus.ACTIVE.value,
            N.c.scope.in_([s.value for s in scopes]),
        )
        .order_by(*RANK_ORDER)
        .limit(25)
    )
    compiled = query.compile(dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True})
    with store.read() as conn:
        rows = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}").all()
    return " | ".join(str(row[-1]) for row in rows)


def test_issue19_item4_S2_portable_notes_are_an_index_walk_in_ranking_order(store: Store) -> None:
    persons.ensure_person(store, "ana")
    plan = _plan(store, [Scope.PORTABLE])
    assert "ix_note_scope_rank" in plan, plan
    assert "TEMP B-TREE" not in plan, plan  # no sort: the index is already in rank order
