"""The one unscoped accessor (S5).

Only five modules may call `unscoped_notes`: the fold, extraction, merge, memory-control
(control.notes) and forensics (control.forensics). The same holds for every read of its
family, all named `unscoped_*`: `PersonMemory.unscoped_note`, the store's
`projection_notes.unscoped_*` and `projection_memory.unscoped_memory` reads, and
`unscoped_memory()` on a memory handed over unopened (the maintenance pass hands one to
merge). tests/unit/test_scope.py reads every module's syntax tree and fails on any other
caller, and on any public reader of notes outside the family. Prompt-facing code selects
notes through engine.scope instead.
"""

from __future__ import annotations

from engram.model.notes import Note, PersonMemory

ALLOWED_CALLERS = frozenset(
    {
        "engram.engine.fold",
        "engram.runtime.extraction",
        "engram.engine.merge",
        "engram.control.notes",
        "engram.control.forensics",
    }
)


def unscoped_notes(memory: PersonMemory) -> list[Note]:
    """Every note of the person, any scope and status, in creation order."""
    return sorted(memory._notes.values(), key=lambda note: note.created_seq)
