"""Issue 15 items 12 and 3: the checkpoint is an append-only signed journal. A write appends
one line naming only the chains it touched (so its cost does not grow with the store), the
file is compacted into a fresh base when it grows, chains are named by keyed hash, a file
of the old format (ids in clear) is read and rewritten hashed — and no change to any byte
or line of the file goes unnoticed."""

from __future__ import annotations

import base64
import json
import random

import pytest

from engram.control.notes import add_note
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.conversations import append_turn, start_conversation
from engram.store import checkpoint as checkpoint_module
from engram.store.checkpoint import Anchor, Checkpoint, CheckpointDamaged
from engram.store.crypto import canonical_json
from engram.store.store import Store
from engram.store.verify import verify

ANA = PersonId("ana")


def _lines(store: Store) -> list[bytes]:
    raw = store.checkpoint.path.read_bytes()
    assert raw.endswith(b"\n")
    return raw.split(b"\n")[:-1]


def _note(store: Store, text: str) -> None:
    add_note(PersonSession.open(store, ANA), text, Kind.FACT, Scope.DIRECT)


def test_issue15_item12_a_write_appends_one_line_with_only_its_chains(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(30):  # thirty conversations: thirty chains the write does not touch
        conversation = start_conversation(store, [ANA])
        append_turn(store, conversation.id, role="user", author=ANA, text=f"turn {n}")
    monkeypatch.setattr(checkpoint_module, "COMPACT_FACTOR", 1_000)  # no compaction now
    before = store.checkpoint.path.read_bytes()
    _note(store, "one more")
    after = store.checkpoint.path.read_bytes()
    assert after.startswith(before)  # appended, not rewritten
    [line] = after[len(before) :].split(b"\n")[:-1]
    step = json.loads(line)
    assert step["serial"] == json.loads(before.split(b"\n")[-2])["serial"] + 1
    assert len(step["chains"]) == 1  # the person's journal
    assert len(line) < 600
    assert b"ana" not in after and b"journal:" not in after and b"log:" not in after


def test_issue15_item12_the_file_is_compacted_and_keeps_every_head(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint_module, "COMPACT_FLOOR", 0)
    start_conversation(store, [ANA])
    sizes, compacted = [], 0
    for n in range(40):
        previous = len(_lines(store))
        _note(store, f"note {n}")
        lines = _lines(store)
        compacted += len(lines) < previous
        base = len(lines[0]) + 1
        sizes.append(store.checkpoint.path.stat().st_size / base)
    assert compacted >= 2
    assert max(sizes) <= checkpoint_module.COMPACT_FACTOR
    report = verify(store)
    assert report.ok and not report.warnings, (report.problems, report.warnings)
    current = store.checkpoint.read()
    assert current is not None
    assert current.chains == {store.hidden_name(c): h for c, h in report.heads.items()}


def test_issue15_item12_a_line_cut_short_by_a_killed_writer_is_lag_not_damage(
    store: Store,
) -> None:
    start_conversation(store, [ANA])
    _note(store, "first")
    whole = store.checkpoint.read()
    assert whole is not None
    with open(store.checkpoint.path, "ab") as torn:
        torn.write(b'{"base":123,"chains":{"ab')  # a writer killed mid-line
    assert store.checkpoint.read() == whole
    assert verify(store).ok
    _note(store, "second")  # drops the torn part and appends after the last whole line
    assert all(line.startswith(b'{"') for line in _lines(store))
    assert verify(store).ok


def _legacy_file(store: Store, current: Checkpoint, clear: dict[str, tuple[int, bytes]]) -> str:
    """The checkpoint as Engram wrote it before issue 15 (one object, ids in clear), as the
    next write after `current` would have."""
    body = {
        "store": store.info.id,
        "chains": {k: [n, h.hex()] for k, (n, h) in sorted(clear.items())},
        "gone": sorted(current.gone),
        "serial": current.serial + 1,
    }
    signed = canonical_json(body).encode()
    data = {**body, "signature": base64.b64encode(store.signer.sign(signed)).decode()}
    return json.dumps(data, sort_keys=True)


def test_issue15_item3_an_old_checkpoint_with_ids_in_clear_is_read_and_rewritten_hashed(
    store: Store,
) -> None:
    start_conversation(store, [ANA])
    _note(store, "first")
    report = verify(store)
    current = store.checkpoint.read()
    assert current is not None and report.ok
    store.checkpoint.path.write_text(_legacy_file(store, current, report.heads))
    legacy = store.checkpoint.read()
    assert legacy is not None and legacy.legacy
    assert legacy.chains == current.chains  # the same heads, now keyed by hash
    store.anchors.write_local(Anchor.of(legacy))  # what the old Engram anchored of it
    again = verify(store)  # no alarm, and the file is rewritten in the new format
    assert again.ok, again.problems
    text = store.checkpoint.path.read_bytes()
    assert b"ana" not in text and b"journal:" not in text
    rewritten = store.checkpoint.read()
    assert rewritten is not None and not rewritten.legacy
    assert rewritten.serial > legacy.serial and rewritten.chains == legacy.chains
    _note(store, "second")
    assert verify(store).ok


def test_issue15_item3_a_write_rewrites_an_old_checkpoint_hashed(store: Store) -> None:
    start_conversation(store, [ANA])
    report = verify(store)
    current = store.checkpoint.read()
    assert current is not None
    store.checkpoint.path.write_text(_legacy_file(store, current, report.heads))
    _note(store, "first")
    assert b"journal:" not in store.checkpoint.path.read_bytes()
    assert verify(store).ok


# ---- every change to the file is noticed ----------------------------------------------


def _noticed(store: Store, anchor: Anchor) -> bool:
    """What verify reports of the file alone: damaged, or not what the anchor last saw."""
    try:
        read = store.checkpoint.read()
    except CheckpointDamaged:
        return True
    return read is None or Anchor.of(read) != anchor


def test_issue15_item12_every_change_to_the_checkpoint_file_is_noticed(store: Store) -> None:
    start_conversation(store, [ANA])
    for n in range(3):
        _note(store, f"note {n}")
    path = store.checkpoint.path
    pristine = path.read_bytes()
    lines = pristine.split(b"\n")[:-1]
    assert len(lines) >= 3
    anchor = store.anchors.read_local()
    assert anchor is not None and not _noticed(store, anchor)
    mutations: list[tuple[str, bytes]] = []
    for offset in range(len(pristine)):  # one bit of every byte
        flipped = bytearray(pristine)
        flipped[offset] ^= 1 << (offset % 8)
        mutations.append((f"bit {offset % 8} of byte {offset}", bytes(flipped)))
    for index in range(len(lines)):
        rest = lines[:index] + lines[index + 1 :]
        mutations.append((f"line {index} deleted", b"".join(x + b"\n" for x in rest)))
        doubled = lines[: index + 1] + lines[index:]
        mutations.append((f"line {index} doubled", b"".join(x + b"\n" for x in doubled)))
    for index in range(len(lines) - 1):
        swapped = [*lines]
        swapped[index], swapped[index + 1] = swapped[index + 1], swapped[index]
        mutations.append((f"lines {index} swapped", b"".join(x + b"\n" for x in swapped)))
    ends = [i + 1 for i, byte in enumerate(pristine) if byte == ord("\n")][:-1]
    for cut in [0, *ends, *random.Random(15).sample(range(1, len(pristine)), 20)]:
        mutations.append((f"cut at {cut}", pristine[:cut]))
    missed = []
    for what, changed in mutations:
        path.write_bytes(changed)
        if not _noticed(store, anchor):
            missed.append(what)
    assert missed == []
    for what, changed in random.Random(12).sample(mutations, 8):  # and verify says so
        path.write_bytes(changed)
        assert not verify(store).ok, what
        store.checkpoint.damaged_path.unlink(missing_ok=True)
    path.write_bytes(pristine)
    assert verify(store).ok
