"""Issue 9 item 5: after an erase the person's id appears nowhere in the store's files in
clear — not as the erasure record's actor, not as the author of their removed turns in
shared conversations, not in participant lists, not as the actor of what they did to
others' journals. Rows that must remain name them by a keyed pseudonym (C3)."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest

from engram.control.conversations import delete_conversation
from engram.control.erase import erase_person
from engram.control.session import PersonSession
from engram.model.ids import PersonId
from engram.runtime.conversations import (
    append_turn,
    excise_tool_result,
    record_tool_call,
    start_conversation,
)
from engram.store import pseudonyms
from engram.store.store import Store
from engram.store.verify import verify
from tests.forensics import fill, raw_bytes, traces

ERASED = PersonId("zq7-erased-person")
OTHER = PersonId("other")


def _everything(store_path: Path) -> bytes:
    """Every file the store, its checkpoint and its anchors left on this computer."""
    anchors = platformdirs.user_data_path("engram")
    side = b"".join(p.read_bytes() for p in anchors.rglob("*") if p.is_file())
    return raw_bytes(store_path) + side


def _live_a_little(store: Store) -> None:
    """The erased person acts on others: deletes a shared conversation (which writes to the
    other participant's journal and the erasure chain) and excises a tool result."""
    doomed = start_conversation(store, [ERASED, OTHER])
    append_turn(store, doomed.id, role="user", author=OTHER, text="soon gone")
    delete_conversation(PersonSession.open(store, ERASED), doomed.id)
    tools = start_conversation(store, [ERASED, OTHER])
    call = record_tool_call(store, tools.id, name="lookup", arguments="{}", result="42")
    excise_tool_result(store, tools.id, call, actor=ERASED, reason="wrong answer")


def test_issue9_item5_the_erased_id_is_nowhere_in_the_files(store: Store, store_path: Path) -> None:
    _, captured = fill(store, ERASED, OTHER)
    _live_a_little(store)
    assert ERASED.encode() in _everything(store_path)  # the scan can find it
    report = erase_person(PersonSession.open(store, ERASED), ERASED).to_json()  # erasing themself
    assert report["actor"].startswith("~") and report["pseudonymized_rows"] >= 4
    assert report["clear_ids_in_rows_older_than_pseudonyms"] == 0
    assert ERASED.encode() not in _everything(store_path)
    assert traces(store_path, captured) == []
    check = verify(store)  # every chain still verifies; the other's notes equal a replay
    assert check.ok, check.problems
    # The others' record stays readable and names the erased person by pseudonym.
    from engram.runtime.conversations import conversations_of, transcript

    alias = pseudonyms.pseudonym(store, ERASED)
    shared = [c for c in conversations_of(store, OTHER) if len(transcript(store, c.id)) > 3]
    authors = {entry.author for c in shared for entry, _ in transcript(store, c.id)}
    assert alias in authors and ERASED not in authors


def test_issue9_item5_rows_written_before_pseudonyms_still_verify_and_are_counted(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stores written before this change committed to clear ids: they verify as before, and
    an erase says how many such rows keep the id rather than breaking their chains."""
    with monkeypatch.context() as old_code:
        old_code.setattr(pseudonyms, "pseudonym", lambda store, name: name)
        fill(store, ERASED, OTHER)
        _live_a_little(store)
    assert verify(store).ok
    report = erase_person(PersonSession.open(store, ERASED), ERASED).to_json()
    assert report["clear_ids_in_rows_older_than_pseudonyms"] > 0
    check = verify(store)
    assert check.ok, check.problems


def test_issue9_item5_a_pseudonym_is_keyed_per_store(store: Store, tmp_path: Path) -> None:
    other_store = Store.create(str(tmp_path / "other.engram"), passphrase="x")
    try:
        mine, theirs = (pseudonyms.pseudonym(s, ERASED) for s in (store, other_store))
    finally:
        other_store.close()
    assert mine != theirs and mine.startswith("~") and len(mine) == 33
    assert pseudonyms.pseudonym(store, mine) == mine


def test_issue9_item5_a_pseudonym_put_in_by_hand_is_caught(store: Store, store_path: Path) -> None:
    """Headers commit to pseudonyms, so swapping a live person's id for theirs keeps every
    hash; verify still notices, since nobody was erased under that name."""
    import sqlite3

    conversation = start_conversation(store, [OTHER])
    append_turn(store, conversation.id, role="user", author=OTHER, text="mine")
    assert verify(store).ok
    with sqlite3.connect(store_path) as raw:
        raw.execute(
            "update conversation_log set author=? where author=?",
            (pseudonyms.pseudonym(store, OTHER), OTHER),
        )
    raw.close()
    report = verify(store)
    assert any("no erasure record erased anyone" in p for p in report.problems)
