"""The one unscoped accessor (S5).

Only five modules may call `unscoped_notes`: the fold, extraction, merge, memory-control
(control.notes) and forensics (control.forensics). The same holds for every read of its
family, all named `unscoped_*`: `PersonMemory.unscoped_note`, the store's
`projection_notes.unscoped_*` and `projection_memory.unscoped_memory` reads, and
`unscoped_memory()` on a memory handed over unopened (the maintenance pass hands one to
merge). tests/unit/test_scope.py reads every module's syntax tree and fails on any other
caller, and on any public reader of notes outside the family. Prompt-facing code selects
notes through engine.scope instead.

`unscoped_audience` is the "all scopes" view (issue 18 item 12): the person's own view of
their memory, for the inspector (control.notes.own_audience hands it to a person's own
session). Being of the family, only the five modules may call it; and the agent-facing
modules may not reach it at all, through control or otherwise (test_scope.py).
"""

from __future__ import annotations

from engram.model.ids import PersonId
from engram.model.notes import Note, PersonMemory
from engram.model.scope import Audience, _subject_alone

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


def unscoped_audience(subject: PersonId) -> Audience:
    """The person's own view: every scope, as if the subject alone reads (S2)."""
    return _subject_alone(subject)
