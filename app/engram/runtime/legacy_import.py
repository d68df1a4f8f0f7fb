"""Legacy static memory files (`memory.md` style) come in as candidates for review (P7).

Such a file is prompt text someone once wrote, not a serialization of typed notes: it has
no person isolation, provenance, scope or lifecycle. So nothing in it becomes a note by
itself. Each statement (a list item or a paragraph line) becomes one pending candidate,
private to the person, with a guessed kind a reviewer can see; headings, code and blank
lines are skipped. The whole file is one write: all of it or none of it.
"""

from __future__ import annotations

import re
from typing import Any

from engram.engine.extraction import MAX_PROPOSAL_CHARS, is_sensitive
from engram.model.errors import InvalidInput
from engram.model.events import NewEvent
from engram.model.ids import CandidateId, PersonId
from engram.model.scope import Kind, Scope
from engram.runtime.note_writes import NoteDraft, suggestion
from engram.store import journal
from engram.store.store import Store

ACTOR = "legacy-import"
MAX_FILE_CHARS = 200_000
MAX_STATEMENTS = 500
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_KIND_HINTS = (
    (r"\b(prefers?|likes?|loves?|dislikes?|hates?|favou?rite)\b", Kind.PREFERENCE),
    (r"\b(answer|reply|respond|tone|language|style|format|call (me|them))\b", Kind.STYLE),
    (r"\b(todo|to do|remind|follow up|pending|needs? to|owes?)\b", Kind.OPEN_THREAD),
)


def statements(markdown: str) -> list[str]:
    """The statements of a legacy memory file, in order, without markdown decoration."""
    found: list[str] = []
    fenced = False
    for raw in markdown.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or not line or line.startswith(("#", ">", "<!--", "|", "---")):
            continue
        item = _ITEM.match(line)
        text = (item.group(1) if item else line).strip()
        text = re.sub(r"[*_`]{1,3}([^*_`]+)[*_`]{1,3}", r"\1", text).strip()
        if text:
            found.append(" ".join(text.split()))
    return found


def guess_kind(text: str) -> Kind:
    """A reviewer's starting point, nothing more."""
    for pattern, kind in _KIND_HINTS:
        if re.search(pattern, text, re.IGNORECASE):
            return kind
    return Kind.FACT


def import_legacy(
    store: Store, person: PersonId, markdown: str, actor: str = ACTOR
) -> list[dict[str, Any]]:
    """Turn a legacy memory file into pending candidates for `person`; returns them."""
    if len(markdown) > MAX_FILE_CHARS:
        raise InvalidInput(f"The file is larger than {MAX_FILE_CHARS:,} characters; split it.")
    found = statements(markdown)
    if not found:
        raise InvalidInput("The file holds no statements to import.")
    if len(found) > MAX_STATEMENTS:
        raise InvalidInput(f"The file holds more than {MAX_STATEMENTS} statements; split it.")
    for number, text in enumerate(found, start=1):
        if len(text) > MAX_PROPOSAL_CHARS:
            raise InvalidInput(
                f"Statement {number} is longer than {MAX_PROPOSAL_CHARS} characters; "
                "shorten or split it. Nothing was imported."
            )
    events: list[NewEvent] = []
    made: list[tuple[CandidateId, str, Kind]] = []
    for text in found:
        kind = guess_kind(text)
        # nobody said it in a conversation: marked ambiguous, so a person always decides
        candidate, event = suggestion(
            NoteDraft(text, kind, Scope.DIRECT, confidence_bp=5_000),
            actor,
            ACTOR,
            None,
            sensitive=is_sensitive(text),
            ambiguous=True,
        )
        events.append(event)
        made.append((candidate, text, kind))
    with store.write() as txn:
        journal.require_person(txn.conn, person)
        journal.append(store, txn, person, events)
    return [{"candidate": c, "text": t, "kind": k.value} for c, t, k in made]
