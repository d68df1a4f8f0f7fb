"""Random but valid journals for property tests of the pure engine."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hypothesis import strategies as st

from engram.engine.fold import apply_event, reopenings
from engram.engine.undo import UNDOABLE, CannotUndo, undo_body
from engram.engine.unscoped import unscoped_audience, unscoped_notes
from engram.model.event_bodies import decode_body
from engram.model.events import Cause, Event, EventType
from engram.model.ids import ConversationId, NoteId, PersonId, TurnId
from engram.model.notes import PersonMemory
from engram.model.scope import Durability, Kind, Scope
from tests.conftest import START

PERSON = PersonId("p1")
CONVERSATIONS = [ConversationId(f"c_{i}") for i in range(5)]

OPS = [
    "add",
    "add",
    "add",
    "restate",
    "contradict",
    "correct",
    "scope",
    "delete",
    "merge",
    "retire",
    "used",
    "digest",
    "remove_dup",
    "delete_conversation",
    "undo",
    "undo",
    "export",  # audit-only (issue 15 item 7): changes nothing but the seq
]


@st.composite
def journals(draw: Any, max_events: int = 40) -> list[Event]:
    """A list of events that folds without error, with text-free bodies."""
    memory = PersonMemory(PERSON)
    events: list[Event] = []
    count = draw(st.integers(min_value=1, max_value=max_events))
    next_id = 0
    at = START
    for _ in range(count):
        op = draw(st.sampled_from(OPS))
        active = [n for n in _active(memory)]
        at = at + timedelta(seconds=draw(st.integers(min_value=0, max_value=7200)))
        live = [c for c in CONVERSATIONS if c not in memory.deleted_conversations]
        conversation = draw(st.sampled_from(live))
        cause = Cause(conversation, TurnId(f"t_{len(events)}"))
        body: dict[str, Any]
        if op == "delete_conversation" and len(live) > 1:
            # C4 as control.conversations does it, then F1 undone for what it closed
            notes = [n for n in unscoped_notes(memory) if n.is_active]
            closed = [n.id for n in notes if n.origin == conversation]
            trimmed = [
                n.id
                for n in notes
                if n.origin != conversation
                and any(s.conversation == conversation for s in n.sources)
            ]
            body = {"conversation": conversation, "closed": closed, "trimmed": trimmed}
            events.append(_apply(memory, EventType.CONVERSATION_DELETED, body, at, cause))
            events += _undo_contradictions(memory, closed, at, cause)
            continue
        if op == "export":
            body = {
                "what": draw(st.sampled_from(["export", "access_report"])),
                "to": draw(st.sampled_from(["file", "stdout"])),
            }
            events.append(_apply(memory, EventType.EXPORTED, body, at, None))
            continue
        if op == "undo":
            undo = _undo(memory, events, f"n_{next_id + 1}")
            if undo is not None:
                next_id += 1
                events.append(_apply(memory, EventType.UNDONE, undo, at, cause))
                continue
            op = "add"
        if op == "add" or not active:
            next_id += 1
            body = {
                "note": f"n_{next_id}",
                "kind": draw(st.sampled_from(list(Kind))).value,
                "scope": draw(st.sampled_from(list(Scope))).value,
                "durability": draw(st.sampled_from(list(Durability))).value,
                "confidence_bp": draw(st.integers(min_value=0, max_value=10_000)),
                "origin": conversation,
                "source": cause.to_json(),
            }
            kind = EventType.NOTE_ADDED
        else:
            target = draw(st.sampled_from(active))
            if op == "restate":
                kind, body = EventType.RESTATED, {"note": target, "source": cause.to_json()}
            elif op == "contradict":
                next_id += 1
                new = f"n_{next_id}"
                add = {
                    "note": new,
                    "kind": "fact",
                    "scope": draw(st.sampled_from(list(Scope))).value,
                    "durability": "lasting",
                    "confidence_bp": 5000,
                    "origin": conversation,
                    "source": cause.to_json(),
                }
                events.append(_apply(memory, EventType.NOTE_ADDED, add, at, cause))
                kind, body = EventType.CONTRADICTED, {"old": target, "new": new}
            elif op == "correct":
                next_id += 1
                kind, body = EventType.CORRECTED, {"old": target, "note": f"n_{next_id}"}
            elif op == "scope":
                kind = EventType.SCOPE_CHANGED
                body = {"note": target, "scope": draw(st.sampled_from(list(Scope))).value}
            elif op == "delete":
                events.append(_apply(memory, EventType.DELETED, {"note": target}, at, cause))
                events += _undo_contradictions(memory, [NoteId(target)], at, cause)
                continue
            elif op == "retire":
                kind, body = EventType.RETIRED, {"note": target}
            elif op == "remove_dup":
                kind, body = EventType.DUPLICATE_REMOVED, {"note": target}
            elif op == "merge":
                into = memory.unscoped_note(NoteId(target))
                assert into is not None
                same = [
                    n
                    for n in active
                    if n != target
                    and (m := memory.unscoped_note(NoteId(n))) is not None
                    and m.scope.scope_class == into.scope.scope_class
                ]
                if not same:
                    kind, body = EventType.RESTATED, {"note": target, "source": cause.to_json()}
                else:
                    kind, body = EventType.MERGED, {"into": target, "merged": [same[0]]}
            elif op == "used":
                kind, body = EventType.ITEM_USED, {"notes": active[:3], "via": "assembly"}
            else:
                kind = EventType.DIGEST_LINE_ADDED
                scope = draw(st.sampled_from(list(Scope))).value
                body = {"conversation": conversation, "scope": scope}
        events.append(_apply(memory, kind, body, at, cause))
    return events


def _undo_contradictions(
    memory: PersonMemory, deleted: list[NoteId], at: Any, cause: Cause
) -> list[Event]:
    """The `reopened` events a deleting write appends (engine.fold.reopenings)."""
    undo = reopenings(memory, deleted, memory.deleted_conversations, "person", cause)
    return [_apply(memory, new.type, new.body.to_json(), at, cause) for new in undo]


def _undo(memory: PersonMemory, events: list[Event], new_note: str) -> dict[str, Any] | None:
    """The body that undoes the newest change that can still be undone, if any."""
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if event.type in UNDOABLE:
            reopened = []
            for later in events[index + 1 :]:
                if later.type is not EventType.REOPENED:
                    break
                reopened.append(later)
            try:
                return undo_body(event, memory.unscoped_note, NoteId(new_note), reopened).to_json()
            except CannotUndo:
                continue
    return None


def _active(memory: PersonMemory) -> list[str]:
    from engram.engine.scope import eligible_ranked

    return sorted(n.id for n in eligible_ranked(memory, unscoped_audience(PERSON)))


def _apply(
    memory: PersonMemory, kind: EventType, body: dict[str, Any], at: Any, cause: Cause | None
) -> Event:
    event = Event(PERSON, memory.seq + 1, at, "extractor", kind, decode_body(kind, body), cause)
    apply_event(memory, event)
    return event
