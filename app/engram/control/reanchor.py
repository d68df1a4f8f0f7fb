"""Re-anchoring the checkpoint after a deliberate move or restore (item 7 of issue 9).

A missing, damaged or older checkpoint makes verify fail, because that is what putting back
an older copy of a store looks like. When it was done on purpose (the store was copied
for offline review without its checkpoint, or a backup was restored), `engram checkpoint
reanchor` vouches for the store as it is now: it first checks every chain and signature
(it refuses to vouch for a damaged store), records who re-anchored and why in the store's
signed record, then writes a new checkpoint and new anchors above every serial seen.
"""

from __future__ import annotations

import json
from typing import Any

from engram.model.clock import from_micros, iso
from engram.model.errors import NotAllowed
from engram.store import chain, erasure
from engram.store.checkpoint_check import removals, status
from engram.store.store import Store
from engram.store.verify import verify

REANCHORED = "checkpoint-reanchored"


def reanchor(store: Store, actor: str, why: dict[str, Any] | None = None) -> dict[str, Any]:
    """Vouch for the store as it is now: a new checkpoint, recorded in the signed record
    (with `why`, e.g. the backup a restore put back, beside who did it)."""
    checked = verify(store, against_checkpoint=False)
    if not checked.ok:
        raise NotAllowed(
            f"The store's own chains do not verify ({checked.problems[0]}), so it was not "
            "re-anchored and nothing was changed; restore it from a backup instead."
        )
    before = status(store)
    previous: set[str] = set()
    try:
        old = store.checkpoint.read()
        previous = old.gone if old else set()
    except (ValueError, KeyError, TypeError, json.JSONDecodeError):
        pass
    with store.write() as txn:
        record = erasure.record_erasure(
            store,
            txn,
            actor,
            {
                **(why or {}),
                "kind": REANCHORED,
                "previous": before["state"],
                "previous_serial": before["serial"],
            },
        )
    heads = dict(checked.heads)
    heads[chain.ERASURE_CHAIN] = txn.heads[chain.ERASURE_CHAIN]
    gone = previous | {name for r in removals(store) for name in r.chains}
    gone -= {store.hidden_name(c) for c in heads}
    damaged = store.checkpoint.damaged_path
    started = store.start_checkpoint(heads, gone)
    if damaged.exists():
        damaged.replace(damaged.with_name(f"{damaged.name}.before-reanchor-{started.serial}"))
    return {
        "checkpoint": str(store.checkpoint.path),
        "previous": before["state"],
        "previous_serial": before["serial"],
        "serial": started.serial,
        "chains": len(heads),
        "record": record,
    }


def checkpoint_status(store: Store) -> dict[str, Any]:
    """The checkpoint, its anchors, and every re-anchor so far (from the signed record)."""
    history = [
        {
            "record": r["seq"],
            "at": iso(from_micros(r["at"])),
            "actor": r["actor"],
            "previous": r.get("previous"),
        }
        for r in _records(store)
        if r.get("kind") == REANCHORED
    ]
    return {**status(store), "reanchored": history}


def _records(store: Store) -> list[dict[str, Any]]:
    with store.read() as conn:
        return erasure.erasure_records(conn)
