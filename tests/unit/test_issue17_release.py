"""Issue 17 item 8: big collections are let go of a piece at a time, so freeing 100,000
rows is many short steps for the interpreter, not one that keeps every other thread out."""

from __future__ import annotations

import sys

from engram.model.ids import PersonId
from engram.model.notes import PersonMemory
from engram.model.release import PIECE, let_go


def test_issue17_item8_let_go_empties_lists_dicts_and_sets_in_pieces() -> None:
    rows, notes, seen = list(range(3 * PIECE + 7)), {n: str(n) for n in range(PIECE + 1)}, {1, 2}
    sizes: list[int] = []

    def watch(frame: object, event: str, arg: object) -> None:
        if event == "line":
            sizes.append(len(rows))

    sys.settrace(lambda frame, event, arg: watch if frame.f_code.co_name == "let_go" else None)
    try:
        let_go(rows, notes, seen)
    finally:
        sys.settrace(None)
    assert rows == [] and notes == {} and seen == set()
    assert len({size for size in sizes if 0 < size < 3 * PIECE + 7}) >= 3  # pieces between


def test_issue17_item8_a_replayed_memory_lets_go_of_its_notes() -> None:
    memory = PersonMemory(PersonId("pat"))
    memory.processed_turns.add(("c", "t"))  # type: ignore[arg-type]
    memory.let_go()
    assert memory.note_count() == 0 and not memory.processed_turns
