"""The periodic maintenance pass (M1-M3): `engram maintain` and hosts' schedulers.

For each person, in one write: hand their stored memory to engine.merge, which reads it
(merge is one of the five modules allowed to read notes of every scope, S5; this module
reads none itself) and decides; then append one journal event per change — retired,
duplicate_removed, profile_rebuilt — so replay reproduces all of it. It takes the same
per-person turn as learning (W5).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from engram.engine import merge
from engram.model.clock import from_micros, to_micros
from engram.model.event_bodies import DuplicateRemoved, ProfileRebuilt, Retired, body_as
from engram.model.events import EventType, NewEvent
from engram.model.ids import PersonId
from engram.model.progress import Progress
from engram.runtime.learning_policy import person_lock
from engram.store import journal, people, projection_memory, projection_state, store_time
from engram.store.store import Store

ACTOR = "maintenance"


def maintain_person(store: Store, person: PersonId, now: datetime | None = None) -> dict[str, Any]:
    """Run the pass for one person; what it changed."""
    with person_lock(store, person), store.write() as txn:
        # The person's journal's own time (store_time.py): the dates the expiry compares
        # with, and the date the retirements get, even when the clock is behind them.
        moment = now or from_micros(
            store_time.journal_stamp(txn.conn, person, to_micros(store.now())).at
        )
        plan = merge.plan_from(
            projection_memory.StoredNotes(txn.conn, person),
            lambda seqs: journal.texts(store, txn.conn, person, seqs),
            moment,
            current_profile(txn.conn, person),
        )
        events = [NewEvent(EventType.RETIRED, ACTOR, Retired(note)) for note in plan.retire]
        events += [
            NewEvent(EventType.DUPLICATE_REMOVED, ACTOR, DuplicateRemoved(dup, kept))
            for dup, kept in plan.duplicates
        ]
        if plan.profile is not None:
            events.append(NewEvent(EventType.PROFILE_REBUILT, ACTOR, plan.profile))
        if events:
            journal.append(store, txn, person, events)
    return {
        "person": person,
        "retired": list(plan.retire),
        "duplicates_removed": [{"note": d, "kept": k} for d, k in plan.duplicates],
        "profile_rebuilt": plan.profile is not None,
    }


def current_profile(conn: Any, person: PersonId) -> ProfileRebuilt | None:
    """The note ids of the last profile rebuilt, or None if there has been none."""
    seq = projection_state.profile_seq(conn, person)
    if seq is None:
        return None
    event = journal.event_at(conn, person, seq)
    return body_as(event.body, ProfileRebuilt) if event else None


def maintain_all(
    store: Store, now: datetime | None = None, progress: Progress | None = None
) -> list[dict[str, Any]]:
    """Run the pass for everyone in the store."""
    with store.read() as conn:
        everyone = people.all_ids(conn)
    reports = []
    for done, person in enumerate(everyone, start=1):
        reports.append(maintain_person(store, person, now))
        if progress:
            progress(done, len(everyone))
    return reports
