"""Issue 17 item 8: verify reports progress and honours Cancel inside one chain, so a
person with 100,000 notes (one journal chain) moves the bar and stops when asked, instead
of being one silent step."""

from __future__ import annotations

from engram.model.ids import PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.note_writes import NoteDraft, note_added
from engram.store import chain, journal
from engram.store.store import Store
from engram.store.verify import verify
from engram.store.verify_chains import CHECK_EVERY

PERSON = PersonId("pat")
NOTES = 3 * CHECK_EVERY + 10


def _one_big_person(store: Store) -> None:
    with store.write() as txn:
        journal.ensure_person(store, txn, PERSON)
        journal.append(
            store,
            txn,
            PERSON,
            [
                note_added(NoteDraft(f"note {n}", Kind.FACT, Scope.PORTABLE), "test", None, None)
                for n in range(NOTES)
            ],
        )


def test_issue17_item8_verify_progress_moves_inside_one_persons_chain(store: Store) -> None:
    _one_big_person(store)
    seen: list[tuple[int, int]] = []
    found = verify(store, lambda done, total: seen.append((done, total)))
    assert found.ok, found.problems
    totals = {total for _done, total in seen}
    assert len(totals) == 1 and totals.pop() >= NOTES
    done = [d for d, _t in seen]
    assert done == sorted(done), "progress never goes back"
    # The one chain holding nearly every entry is reported in steps, not in one jump.
    assert len([d for d in done if 0 < d < NOTES]) >= 3
    assert seen[-1][0] == seen[-1][1]


def test_issue17_item8_verify_cancel_stops_in_the_middle_of_a_chain(store: Store) -> None:
    _one_big_person(store)
    asked: list[int] = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) >= 2  # the second check: inside the person's journal

    found = verify(store, None, cancelled)
    assert found.cancelled
    assert found.entries < NOTES, "it stopped before the chain's end"
    assert "verify was cancelled before it finished" in found.warnings


def test_issue17_item8_verify_cancel_is_heard_during_a_long_replay(store: Store) -> None:
    # Since issue 19 item 2 the replay folds each event as the walk reads it (one pass), so
    # the walk's last check inside the chain is also one inside the replay.
    _one_big_person(store)
    asked: list[int] = []
    walk_checks = NOTES // CHECK_EVERY  # the walk's checks in the person's journal

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) >= walk_checks  # the last check inside the chain

    found = verify(store, None, cancelled)
    assert found.cancelled
    assert found.entries >= walk_checks * CHECK_EVERY, "the walk went on to its last check"
    assert len(asked) == walk_checks
    # Stopped inside the replay: the person's chain was not vouched for (after the chain,
    # it would have been counted and anchored).
    assert chain.journal_chain(PERSON) not in found.heads
