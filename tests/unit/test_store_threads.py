"""Issue 17 item 7: one Store serves the inspector's two lanes at once (store.Store says
how). A read held open on one thread never holds a write on another back, and a job the
window dropped at a lock cannot reach the closed store again."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import func, select

from engram.model.errors import KeyUnavailable
from engram.model.ids import PersonId
from engram.store import journal, schema
from engram.store.store import Store

WRITE_WITHIN_S = 2.0


def test_issue17_item7_a_write_commits_while_another_thread_holds_a_read_open(
    store: Store,
) -> None:
    reading, done = threading.Event(), threading.Event()
    seen: list[int] = []

    def long_read() -> None:  # a verify's walk: one snapshot, held for a while
        with store.read() as conn, conn.begin():
            seen.append(
                int(conn.execute(select(func.count()).select_from(schema.persons)).scalar_one())
            )
            reading.set()
            done.wait(10)
            seen.append(
                int(conn.execute(select(func.count()).select_from(schema.persons)).scalar_one())
            )

    reader = threading.Thread(target=long_read)
    reader.start()
    assert reading.wait(5)
    began = time.monotonic()
    with store.write() as txn:
        journal.ensure_person(store, txn, PersonId("pat"))
    assert time.monotonic() - began < WRITE_WITHIN_S
    done.set()
    reader.join(5)
    assert seen == [0, 0]  # the reader kept its snapshot throughout
    with store.read() as conn:
        assert conn.execute(select(func.count()).select_from(schema.persons)).scalar_one() == 1


def test_issue17_item7_a_closed_store_refuses_what_a_dropped_job_still_asks(
    store: Store,
) -> None:
    store.close()  # the window locked while a job ran
    with pytest.raises(KeyUnavailable, match="locked"), store.read():
        pass
    with pytest.raises(KeyUnavailable, match="locked"), store.write():
        pass
