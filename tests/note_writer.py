"""A second process that keeps writing to a store: `python -m tests.note_writer STORE PERSON
READY STOP` adds notes one transaction at a time (passphrase from ENGRAM_TEST_PASSPHRASE),
creates READY after its first one, stops once STOP exists, and prints how many it added."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def write_until(store_path: str, person: str, ready: Path, stop: Path) -> int:
    from engram.control import notes
    from engram.control.session import PersonSession
    from engram.model.scope import Kind, Scope
    from engram.store.store import Store

    store = Store.open(store_path, passphrase=os.environ["ENGRAM_TEST_PASSPHRASE"])
    added = 0
    try:
        session = PersonSession.open_new(store, person, "staff:writer")
        while not stop.exists():
            notes.add_note(
                session, f"note number {added}", Kind.FACT, Scope.DIRECT, create_person=True
            )
            added += 1
            if added == 1:
                ready.touch()
    finally:
        store.close()
    return added


if __name__ == "__main__":
    store_arg, person_arg, ready_arg, stop_arg = sys.argv[1:]
    print(write_until(store_arg, person_arg, Path(ready_arg), Path(stop_arg)), flush=True)
