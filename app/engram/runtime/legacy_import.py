"""Legacy static memory files (`memory.md` style) come in as candidates for review (P7).

Such a file is prompt text someone once wrote, not a serialization of typed notes: it has
no person isolation, provenance, scope or lifecycle. So nothing in it becomes a note by
itself. Each statement (a list item or a paragraph line) becomes one pending candidate,
private to the person, with a guessed kind a reviewer can see; headings, code and blank
lines are skipped. Each statement is checked (`Statement`: a length, no control
characters) and a refusal names its line. The whole file is one write: all of it or none
of it.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, ValidationError, field_validator

from engram.engine.extraction import MAX_PROPOSAL_CHARS
from engram.model.errors import InvalidInput
from engram.model.events import NewEvent
from engram.model.ids import CandidateId, PersonId
from engram.model.scope import Kind, Scope
from engram.model.wire import StrictModel, describe, without_bom
from engram.runtime.note_writes import NoteDraft, suggestion
from engram.runtime.sensitive_lexicon import sensitive_category
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
# C0 controls but tab, and DEL: a text file holds none of them (a NUL says "binary").
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class Statement(StrictModel):
    """One statement of a legacy file, as it will be offered for review."""

    line: int = Field(ge=1)
    statement: Annotated[str, Field(min_length=1, max_length=MAX_PROPOSAL_CHARS)]

    @field_validator("statement")
    @classmethod
    def _plain_text(cls, text: str) -> str:
        if _CONTROL.search(text):
            raise ValueError("the statement holds control characters (is this a text file?)")
        return text


def statements(markdown: str) -> list[Statement]:
    """The statements of a legacy memory file, in order, without markdown decoration, each
    checked (Statement) and named by its line number when refused. Lines end at line feeds
    only: a U+2028 inside a statement does not split it."""
    found: list[Statement] = []
    fenced = False
    # A BOM is stripped, as `import` strips it: it would glue itself to the first line's
    # bullet or heading, which would then no longer read as one.
    for number, raw in enumerate(without_bom(markdown).split("\n"), start=1):
        line = raw.removesuffix("\r").strip()
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or not line or line.startswith(("#", ">", "<!--", "|", "---")):
            continue
        item = _ITEM.match(line)
        text = (item.group(1) if item else line).strip()
        text = re.sub(r"[*_`]{1,3}([^*_`]+)[*_`]{1,3}", r"\1", text).strip()
        if not text:
            continue
        try:
            found.append(Statement(line=number, statement=" ".join(text.split())))
        except ValidationError as error:
            raise InvalidInput(f"Line {number}: {describe(error)}; nothing was imported.") from None
    return found


def guess_kind(text: str) -> Kind:
    """A reviewer's starting point, nothing more."""
    for pattern, kind in _KIND_HINTS:
        if re.search(pattern, text, re.IGNORECASE):
            return kind
    return Kind.FACT


def import_legacy(
    store: Store,
    person: PersonId,
    markdown: str,
    actor: str = ACTOR,
    *,
    create_person: bool = False,
) -> list[dict[str, Any]]:
    """Turn a legacy memory file into pending candidates for `person`; returns them. With
    `create_person`, a person the store has not seen yet is created in the same write."""
    if len(markdown) > MAX_FILE_CHARS:
        raise InvalidInput(f"The file is larger than {MAX_FILE_CHARS:,} characters; split it.")
    found = statements(markdown)
    if not found:
        raise InvalidInput("The file holds no statements to import.")
    if len(found) > MAX_STATEMENTS:
        raise InvalidInput(f"The file holds more than {MAX_STATEMENTS} statements; split it.")
    events: list[NewEvent] = []
    made: list[tuple[CandidateId, str, Kind]] = []
    for statement in found:
        text = statement.statement
        kind = guess_kind(text)
        detected = sensitive_category(text)  # P5
        # nobody said it in a conversation: marked ambiguous, so a person always decides
        candidate, event = suggestion(
            NoteDraft(text, kind, Scope.DIRECT, confidence_bp=5_000),
            actor,
            ACTOR,
            None,
            sensitive=detected is not None,
            category=detected.value if detected else None,
            ambiguous=True,
        )
        events.append(event)
        made.append((candidate, text, kind))
    with store.write() as txn:
        if create_person:
            journal.ensure_person(store, txn, person, actor=actor)
        else:
            journal.require_person(txn.conn, person)
        journal.append(store, txn, person, events)
    return [{"candidate": c, "text": t, "kind": k.value} for c, t, k in made]
