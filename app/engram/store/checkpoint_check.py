"""Verify's rollback check: the store's chains against the signed checkpoint and its anchors.

The checkpoint names chains by keyed hash (`Store.hidden_name`); the store's chains are
matched to it by hashing their ids.

- A chain the store holds fewer entries of than the checkpoint saw, or whose entry differs,
  is a rollback, unless the store's own signed history explains it. A chain *missing* from
  the store is explained by any signed erasure record that names its keyed hash (a crash
  between an erase's commit and its checkpoint line, even when later writes — another
  erase — moved the checkpoint on meanwhile: issue 15 item 3); putting back a copy from
  before a re-created person's return is still caught by the ledger, which signed their
  new key. A chain still present but behind is explained only by an erasure record newer
  than the checkpoint's erasure chain, with every entry it now holds made after that
  erasure (the person was created again). Then the checkpoint lags and is advanced, with a
  warning — the only thing verify ever writes, and never the database.
- A missing checkpoint is a problem where this computer saw one (an anchor for this location
  exists): every store wrote one when it was created, and deleting it is how a rollback
  would hide. Where no anchor knows this location, the store is a copy brought here without
  its checkpoint (offline review): a warning (`copy_without_checkpoint`), not a problem — nothing
  says it was ever checkpointed here, and `engram checkpoint reanchor` vouches for it.
- An anchor (user data folder, OS keyring) that saw a later checkpoint than the file catches
  an older copy put back together with its own older checkpoint.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from engram.model.errors import KeyUnavailable
from engram.store import chain, pending_erasure, schema
from engram.store.checkpoint import Anchor, Checkpoint, CheckpointDamaged
from engram.store.store import Store

Heads = dict[str, tuple[int, dict[int, bytes]]]

REANCHOR = "if the store was moved or restored on purpose, run 'engram checkpoint reanchor'"


@dataclass(frozen=True, slots=True)
class Removal:
    """One signed erasure record: its place in the chain, its time, the chains it removed."""

    seq: int
    at: int
    chains: frozenset[str]


def removals(store: Store) -> list[Removal]:
    """Every erasure record, with the keyed hashes of the chains it removed."""
    E = schema.erasures
    found = []
    with store.read() as conn:
        for r in conn.execute(select(E.c.seq, E.c.at, E.c.body).order_by(E.c.seq)):
            try:
                named = json.loads(r.body).get("chains", [])
            except (ValueError, AttributeError):
                named = []  # a damaged record: the chain walk reports it
            found.append(Removal(int(r.seq), int(r.at), frozenset(str(n) for n in named)))
    return found


def _first_at(store: Store, chain_id: str) -> int | None:
    kind, _, name = chain_id.partition(":")
    J, L = schema.journal, schema.conversation_log
    query = {
        "journal": select(func.min(J.c.at)).where(J.c.person == name),
        "log": select(func.min(L.c.at)).where(L.c.conversation == name),
    }.get(kind)
    if query is None:
        return None
    with store.read() as conn:
        value = conn.execute(query).scalar()
    return None if value is None else int(value)


@dataclass
class Advance:
    """What a lagging checkpoint is brought up to: heads by chain id; erased and re-created
    chains by keyed hash."""

    heads: dict[str, tuple[int, bytes]]
    gone: set[str]
    revived: set[str]

    def __bool__(self) -> bool:
        return bool(self.heads or self.gone or self.revived)


def compare(
    store: Store, checkpoint: Checkpoint, heads: Heads, history: list[Removal]
) -> tuple[list[str], Advance]:
    """Problems (rollbacks) and what to advance the checkpoint by (lag)."""
    problems: list[str] = []
    advance = Advance({}, set(), set())
    ids = {store.hidden_name(chain_id): chain_id for chain_id in heads}
    seen_erasures = checkpoint.chains.get(store.hidden_name(chain.ERASURE_CHAIN), (0, b""))[0]
    ever_erased = {name for r in history for name in r.chains}
    erased_since = {name for r in history if r.seq > seen_erasures for name in r.chains}
    for hidden, (length, head) in sorted(checkpoint.chains.items()):
        chain_id = ids.get(hidden)
        have = heads[chain_id] if chain_id is not None else None
        if chain_id is not None and have is not None and have[1].get(length) == head:
            if have[0] > length:
                advance.heads[chain_id] = (have[0], have[1][have[0]])
            continue
        if hidden in (ever_erased if have is None else erased_since):
            advance.gone.add(hidden)  # erased after the checkpoint last saw it
            continue
        label = chain_id or f"a chain the checkpoint knows by the keyed hash {hidden[:16]}"
        if have is None or have[0] < length:
            got = 0 if have is None else have[0]
            problems.append(
                f"{label}: the store holds {got} entries but the checkpoint saw {length}; "
                "an older copy of the store may have been put back"
            )
        else:
            problems.append(f"{label}: entry {length} differs from the checkpoint's")
    for chain_id, (length, hashes) in sorted(heads.items()):
        hidden = store.hidden_name(chain_id)
        if hidden in checkpoint.chains and hidden not in advance.gone:
            continue
        if hidden in checkpoint.gone or hidden in advance.gone:
            erased_at = [r.at for r in history if hidden in r.chains]
            first = _first_at(store, chain_id)
            if erased_at and first is not None and first >= max(erased_at):
                advance.revived.add(hidden)  # started again after its erasure
                advance.gone.discard(hidden)
                advance.heads[chain_id] = (length, hashes[length])
            else:
                problems.append(
                    f"{chain_id}: this erased chain is back; an older copy was restored"
                )
        elif length:
            advance.heads[chain_id] = (length, hashes[length])  # new since the checkpoint
    return problems, advance


@dataclass
class Before:
    """What verify reads before its snapshot, in the order writers write them (anchors are
    written after the checkpoint, the checkpoint after the commit), so a write that lands
    while verify runs never looks like a rollback."""

    anchors: list[tuple[str, Anchor | None]]
    checkpoint: Checkpoint | None
    damaged: str | None
    warnings: list[str]


def read_before(store: Store) -> Before:
    """Anchors, then the checkpoint: read first thing by verify."""
    warnings: list[str] = []
    anchors: list[tuple[str, Anchor | None]] = [
        ("this computer's user data folder", store.anchors.read_local())
    ]
    if store.anchors.in_keyring():
        try:
            anchors.append(("the OS keyring", store.anchors.read_keyring()))
        except KeyUnavailable as error:
            warnings.append(f"the checkpoint's copy in the OS keyring could not be read: {error}")
    elif store.anchors.keyring_unasked:
        warnings.append(
            "the OS keyring could not be asked for the checkpoint's copy there: "
            f"{store.anchors.keyring_unasked}"
        )
    try:
        return Before(anchors, store.checkpoint.read(), None, warnings)
    except CheckpointDamaged as error:
        return Before(anchors, None, f"checkpoint: {error}", warnings)


def _anchor_problems(before: Before, checkpoint: Checkpoint) -> list[str]:
    problems = []
    for place, anchor in before.anchors:
        if anchor is None:
            continue
        if anchor.serial > checkpoint.serial:
            problems.append(
                f"checkpoint: it is older than the one {place} last saw (number "
                f"{checkpoint.serial}, not {anchor.serial}); an older copy of the store and its "
                f"checkpoint may have been put back ({REANCHOR})"
            )
        elif anchor.serial == checkpoint.serial and anchor.digest != checkpoint.digest:
            problems.append(
                f"checkpoint: it differs from the one {place} last saw; an older copy of the "
                f"store and its checkpoint may have been put back ({REANCHOR})"
            )
    return problems


def copy_without_checkpoint(before: Before) -> bool:
    """A copy brought here without its checkpoint (issue 17 item 12): there is none, and no
    anchor of this computer ever saw one at this location, so it is not the trace of a
    checkpoint deleted to hide a rollback."""
    return (
        before.checkpoint is None
        and before.damaged is None
        and all(anchor is None for _, anchor in before.anchors)
    )


def check_checkpoint(
    store: Store, before: Before, heads: Heads, warnings: list[str], *, may_advance: bool = True
) -> list[str]:
    """Rollback problems; advances a lagging checkpoint (and says so in `warnings`) unless
    `may_advance` is False (verify found the chains themselves at fault: entries no signed
    head covers must never be anchored)."""
    warnings += before.warnings
    if store.anchors.keyring_failed:
        warnings.append("the checkpoint's copy in the OS keyring could not be updated this session")
    problems = [*pending_erasure.problems(store)]
    cp = store.checkpoint
    if cp.damaged_path.exists():
        problems.append(
            f"checkpoint: it was damaged and set aside at {cp.damaged_path}; a rollback "
            f"before then cannot be ruled out ({REANCHOR})"
        )
    if before.damaged:
        return [*problems, before.damaged]
    checkpoint = before.checkpoint
    if checkpoint is None:
        if copy_without_checkpoint(before):
            return problems  # verify says so, as a warning
        return [
            *problems,
            f"checkpoint: there is none at {cp.path}, though this computer saw one there, so "
            f"an older copy of the store put back there could not be detected; {REANCHOR}",
        ]
    rollbacks, advance = compare(store, checkpoint, heads, removals(store))
    problems += rollbacks + _anchor_problems(before, checkpoint)
    # Anchors a failed or interrupted write left behind are brought up to date too, and a
    # checkpoint of the old format (chain ids in clear) is rewritten hashed.
    lagging = any(
        anchor is None or anchor.serial < checkpoint.serial for _, anchor in before.anchors
    )
    # A store opened read-only is compared, never written beside: its checkpoint may lag.
    if (
        not problems
        and may_advance
        and not store.read_only
        and (advance or checkpoint.legacy or lagging)
    ):
        written = store.record_in_checkpoint(advance.heads, advance.gone, advance.revived, warnings)
        if written is not None:
            store.anchors.write_keyring(written)
        if advance.gone or advance.revived:
            warnings.append(
                "the checkpoint had missed an erasure (a write was interrupted before its "
                "checkpoint was saved); the store's signed erasure record explains it, and the "
                "checkpoint was brought up to date"
            )
    return problems


def status(store: Store) -> dict[str, Any]:
    """Where the checkpoint is and what its anchors saw (`engram checkpoint status`)."""
    try:
        checkpoint = store.checkpoint.read()
        state = "present" if checkpoint else "missing"
    except CheckpointDamaged:
        checkpoint, state = None, "damaged"
    anchors: dict[str, Any] = {}
    local = store.anchors.read_local()
    anchors["user_data_folder"] = local.serial if local else None
    if store.anchors.in_keyring():
        try:
            anchored = store.anchors.read_keyring()
            anchors["keyring"] = anchored.serial if anchored else None
        except KeyUnavailable as error:
            anchors["keyring"] = str(error)
    return {
        "path": str(store.checkpoint.path),
        "state": state,
        "serial": checkpoint.serial if checkpoint else None,
        "chains": len(checkpoint.chains) if checkpoint else 0,
        "anchors": anchors,
    }
