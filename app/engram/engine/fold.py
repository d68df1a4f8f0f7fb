"""The fold: journal events -> a person's notes (F1-F5).

`apply_event` is the single step; it reads and writes through a FoldTarget, which is either
an in-memory PersonMemory (replay, time travel, tests) or the store's projection (which
applies the same step to the few notes an event touches, so appends stay O(1)).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable
from datetime import datetime
from typing import Any, Protocol

from engram.engine.fold_candidates import (
    on_candidate_applied,
    on_candidate_reviewed,
    on_candidate_suggested,
    undo_candidate_decision,
)
from engram.engine.fold_target import FoldError as FoldError  # re-exported: its home was here
from engram.engine.fold_target import FoldTarget, close_note
from engram.model.event_bodies import (
    Closed,
    Contradicted,
    ConversationDeleted,
    Corrected,
    Deleted,
    DigestLineAdded,
    ExtractionCheckpoint,
    ItemUsed,
    Merged,
    NoteAdded,
    Reopened,
    Restated,
    ScopeChanged,
    Undone,
    body_as,
)
from engram.model.events import Cause, Event, EventType, NewEvent
from engram.model.ids import ConversationId, NoteId, PersonId
from engram.model.notes import (
    Change,
    DigestLine,
    Note,
    NoteStatus,
    PersonMemory,
    Source,
    Usage,
)
from engram.model.scope import Scope


def fold(events: Iterable[Event], start: PersonMemory) -> PersonMemory:
    """Fold events onto a copy of `start`; the same events in any chunking agree (F5)."""
    memory = start.copy()
    for event in events:
        apply_event(memory, event)
    return memory


def fold_as_of(events: Iterable[Event], person: PersonId, moment: datetime) -> PersonMemory:
    """Time travel: the memory exactly as it stood at `moment` (events at or before it)."""
    memory = PersonMemory(person)
    for event in events:
        if event.at > moment:
            break
        apply_event(memory, event)
    return memory


def apply_event(target: FoldTarget, event: Event) -> None:
    """Apply one event; raise FoldError if it does not follow the state."""
    if event.person != target.person:
        raise FoldError(f"event {event.seq} belongs to another person")
    if event.seq != target.seq + 1:
        raise FoldError(f"event {event.seq} does not follow event {target.seq}")
    handler = _HANDLERS.get(event.type)
    if handler is None:  # every type has a handler, AUDIT_ONLY included (test_fold)
        raise FoldError(f"event {event.seq} has type {event.type}, which the fold does not know")
    handler(target, event)
    target.set_seq(event.seq)


def _named(note_id: NoteId | None, event: Event) -> NoteId:
    if note_id is None:
        raise FoldError(f"event {event.seq} ({event.type}) names no note where it needs one")
    return note_id


def _need(target: FoldTarget, note_id: NoteId | None, event: Event) -> Note:
    note = target.unscoped_note(_named(note_id, event))
    if note is None:
        raise FoldError(f"event {event.seq} ({event.type}) names unknown note {note_id}")
    return note


def _need_open(target: FoldTarget, note_id: NoteId | None, event: Event) -> Note:
    note = _need(target, note_id, event)
    if not note.is_active:
        raise FoldError(f"event {event.seq} ({event.type}) names closed note {note_id}")
    return note


def _source(cause: Cause | None, at: datetime) -> Source | None:
    return Source(cause.conversation, cause.turn, at) if cause is not None else None


def _on_note_added(target: FoldTarget, event: Event) -> None:
    body = body_as(event.body, NoteAdded)
    note_id = body.note
    if target.unscoped_note(note_id) is not None:
        raise FoldError(f"event {event.seq} re-adds note {note_id}")
    source = _source(body.source, event.at)
    target.put_note(
        Note(
            id=note_id,
            person=event.person,
            kind=body.kind,
            scope=body.scope,
            durability=body.durability,
            text_seq=event.seq,
            initial_confidence_bp=body.confidence_bp,
            valid_from=event.at,
            created_seq=event.seq,
            actor=event.actor,
            topic=body.topic,
            origin=body.origin,
            sources=(source,) if source else (),
        )
    )


def _on_restated(target: FoldTarget, event: Event) -> None:
    # F2: a restatement adds a source; it never creates a note.
    body = body_as(event.body, Restated)
    note = _need_open(target, body.note, event)
    source = _source(body.source, event.at)
    if source is None:
        raise FoldError(f"event {event.seq} restates {note.id} without a source")
    change = Change(event.seq, event.at, event.type, event.actor, source.conversation)
    target.put_note(
        dataclasses.replace(note, sources=(*note.sources, source), changes=(*note.changes, change))
    )


def _on_contradicted(target: FoldTarget, event: Event) -> None:
    # F1: the old note's interval closes at the contradiction; both notes stay for replay.
    body = body_as(event.body, Contradicted)
    old = _need_open(target, body.old, event)
    new = _need(target, body.new, event)
    target.put_note(close_note(old, event, NoteStatus.CONTRADICTED, new.id))


def _on_corrected(target: FoldTarget, event: Event) -> None:
    # C5: an edit is a new version; the old version is closed, never overwritten.
    body = body_as(event.body, Corrected)
    old = _need_open(target, body.old, event)
    new_id = body.note
    if target.unscoped_note(new_id) is not None:
        raise FoldError(f"event {event.seq} re-adds note {new_id}")
    target.put_note(
        Note(
            id=new_id,
            person=event.person,
            kind=body.kind or old.kind,
            scope=body.scope or old.scope,
            durability=old.durability,
            text_seq=event.seq,
            initial_confidence_bp=old.initial_confidence_bp,
            valid_from=event.at,
            created_seq=event.seq,
            actor=event.actor,
            topic=old.topic,
            origin=None,
            sources=old.sources,
            supersedes=old.id,
        )
    )
    closed = close_note(old, event, NoteStatus.CORRECTED, new_id)
    target.put_note(dataclasses.replace(closed, superseded_by=new_id))


def _on_scope_changed(target: FoldTarget, event: Event) -> None:
    body = body_as(event.body, ScopeChanged)
    _rescope(target, event, _need_open(target, body.note, event), body.scope)


def _rescope(target: FoldTarget, event: Event, note: Note, scope: Scope) -> None:
    change = Change.rescoped(event.seq, event.at, event.type, event.actor, note.scope, scope)
    target.put_note(dataclasses.replace(note, scope=scope, changes=(*note.changes, change)))


def _closer(status: NoteStatus) -> Any:
    def handle(target: FoldTarget, event: Event) -> None:
        body = body_as(event.body, Closed)
        note = _need_open(target, body.note, event)
        target.put_note(close_note(note, event, status, body.kept))

    return handle


def _on_deleted(target: FoldTarget, event: Event) -> None:
    """C2; a note forgotten (issue 21 item 7) when closed already keeps its closure, and
    the change says its words went."""
    body = body_as(event.body, Deleted)
    note = _need(target, body.note, event)
    if note.is_active or not body.shredded:
        _closer(NoteStatus.DELETED)(target, event)
        return
    change = Change(event.seq, event.at, event.type, event.actor, "forgotten")
    target.put_note(dataclasses.replace(note, changes=(*note.changes, change)))


def _on_merged(target: FoldTarget, event: Event) -> None:
    body = body_as(event.body, Merged)
    into = _need_open(target, body.into, event)
    sources = list(into.sources)
    for merged_id in body.merged:
        merged = _need_open(target, merged_id, event)
        if merged.scope.scope_class != into.scope.scope_class:
            # F4: private and portable notes never combine.
            raise FoldError(f"event {event.seq} merges across scope classes")
        sources.extend(merged.sources)
        target.put_note(close_note(merged, event, NoteStatus.MERGED, into.id))
    change = Change(event.seq, event.at, event.type, event.actor, ",".join(body.merged))
    target.put_note(
        dataclasses.replace(into, sources=tuple(sources), changes=(*into.changes, change))
    )


def _on_conversation_deleted(target: FoldTarget, event: Event) -> None:
    # C4: notes whose text originated there close; survivors lose it as a corroborator.
    body = body_as(event.body, ConversationDeleted)
    conversation = body.conversation
    for note_id in body.closed:
        note = _need(target, note_id, event)
        if note.is_active:
            note = close_note(note, event, NoteStatus.DELETED)
        target.put_note(note)
    for note_id in body.trimmed:
        note = _need(target, note_id, event)
        kept = tuple(s for s in note.sources if s.conversation != conversation)
        change = Change(event.seq, event.at, event.type, event.actor, conversation)
        target.put_note(dataclasses.replace(note, sources=kept, changes=(*note.changes, change)))
    target.mark_conversation_deleted(conversation)


def _on_reopened(target: FoldTarget, event: Event) -> None:
    # F1 undone: the newer note that contradicted this one was deleted, so what was known
    # before holds again. The interval reopens; the contradiction stays in its changes.
    body = body_as(event.body, Reopened)
    note = _need(target, body.note, event)
    closure = note.closure
    newer = _need(target, body.after, event)
    if (
        note.status is not NoteStatus.CONTRADICTED
        or closure is None
        or closure.by_note != newer.id
        or newer.is_active
    ):
        raise FoldError(f"event {event.seq} reopens note {note.id}, which is not undone")
    gone = set(body.without_sources)
    detail = f"contradicted by {newer.id} at {closure.at.isoformat()}; {newer.id} was deleted"
    change = Change(event.seq, event.at, event.type, event.actor, detail)
    target.put_note(
        dataclasses.replace(
            note,
            status=NoteStatus.ACTIVE,
            valid_to=None,
            closure=None,
            sources=tuple(s for s in note.sources if s.conversation not in gone),
            changes=(*note.changes, change),
        )
    )


class ContradictedBy(Protocol):
    """Where the notes a deletion may bring back are looked up (a folded memory, or the
    store's projection handed over unopened)."""

    def unscoped_contradicted_by(self, notes: Collection[NoteId]) -> list[Note]: ...


def reopenings(
    memory: ContradictedBy,
    deleted: Collection[NoteId],
    gone: Collection[ConversationId],
    actor: str,
    cause: Cause | None = None,
) -> list[NewEvent]:
    """The events that undo contradictions when their newer side is deleted: each note a
    deleted note contradicted reopens, so deleting a wrong contradiction restores what was
    known before. A note whose text went with a deleted conversation (`gone`) cannot come
    back; what it contradicted in turn is looked at instead. Only contradictions: deleting
    an edit (C5) does not bring back the version before it. A reopened note drops its
    sources from deleted conversations (C4).
    """
    events: list[NewEvent] = []
    seen: set[NoteId] = set(deleted)
    frontier: Collection[NoteId] = seen.copy()
    while frontier:
        dead: set[NoteId] = set()
        for note in memory.unscoped_contradicted_by(frontier):
            if note.id in seen:
                continue
            seen.add(note.id)
            if note.origin is not None and note.origin in gone:
                dead.add(note.id)  # its text is gone: what it contradicted may come back
                continue
            assert note.closure is not None and note.closure.by_note is not None
            stale = sorted({s.conversation for s in note.sources if s.conversation in gone})
            body = Reopened(note.id, note.closure.by_note, tuple(stale))
            events.append(NewEvent(EventType.REOPENED, actor, body, cause))
        frontier = dead
    return events


def _on_undone(target: FoldTarget, event: Event) -> None:
    # Undo (engine.undo): a new event restores what was there; nothing earlier is rewritten.
    body = body_as(event.body, Undone)
    if body.candidate is not None:  # a decision on a candidate (issue 21 item 8)
        # The note it takes back is looked up here: the fold's one way to a note (S5).
        taken = None if body.note is None else target.unscoped_note(body.note)
        undo_candidate_decision(target, event, body, taken)
        return
    if body.action == "rescope":
        if body.scope is None:
            raise FoldError(f"event {event.seq} undoes a change of scope without naming one")
        _rescope(target, event, _need_open(target, body.note, event), body.scope)
        return
    restored = _need(target, body.restored, event)
    new_id = _named(body.new, event)
    if body.action == "delete" and new_id == restored.id:
        _reopen_deleted(target, event, restored)
        return
    if target.unscoped_note(new_id) is not None:
        raise FoldError(f"event {event.seq} re-adds note {new_id}")
    if body.action == "edit":
        current = _need_open(target, body.note, event)
        if restored.superseded_by != current.id:
            raise FoldError(
                f"event {event.seq} restores {restored.id}, which {current.id} did not edit"
            )
        sources = current.sources
        closed = close_note(current, event, NoteStatus.CORRECTED, new_id)
        target.put_note(dataclasses.replace(closed, superseded_by=new_id))
        replaced = current.id
    elif body.action == "delete":  # as undo wrote it before issue 17: a restored copy
        if restored.status is not NoteStatus.DELETED or restored.superseded_by is not None:
            raise FoldError(f"event {event.seq} restores {restored.id}, which is not deleted")
        sources = restored.sources
        target.put_note(dataclasses.replace(restored, superseded_by=new_id))
        replaced = restored.id
        for back in body.recloses:
            # What the deletion brought back is contradicted again, now by the restored note.
            note = _need_open(target, back, event)
            target.put_note(close_note(note, event, NoteStatus.CONTRADICTED, new_id))
    else:
        raise FoldError(f"event {event.seq} undoes an unknown action {body.action!r}")
    target.put_note(
        Note(
            id=new_id,
            person=event.person,
            kind=restored.kind,
            scope=restored.scope,
            durability=restored.durability,
            # The restored version reads the very payload it restores: no text is copied, and
            # it dies with that payload's conversation (C4).
            text_seq=restored.text_seq,
            initial_confidence_bp=restored.initial_confidence_bp,
            valid_from=event.at,
            created_seq=event.seq,
            actor=event.actor,
            topic=restored.topic,
            origin=restored.origin,
            sources=sources,
            supersedes=replaced,
        )
    )


def _reopen_deleted(target: FoldTarget, event: Event, note: Note) -> None:
    """Undo of a deletion: the same note holds again — its id, author, sources and usage —
    and its interval continues, open. The deletion and its undo stay in its changes, so its
    history shows both, and time travel to a moment between them shows it deleted."""
    closure = note.closure
    if note.status is not NoteStatus.DELETED or closure is None:
        raise FoldError(f"event {event.seq} restores {note.id}, which is not deleted")
    if closure.type is not EventType.DELETED:  # its conversation went: its text is gone
        raise FoldError(f"event {event.seq} reopens {note.id}, which no deletion closed")
    deleted = Change(closure.seq, closure.at, closure.type, closure.actor)
    undone = Change(event.seq, event.at, event.type, event.actor, "deleted -> active")
    target.put_note(
        dataclasses.replace(
            note,
            status=NoteStatus.ACTIVE,
            valid_to=None,
            closure=None,
            changes=(*note.changes, deleted, undone),
        )
    )
    for back in body_as(event.body, Undone).recloses:
        # What the deletion brought back is contradicted again, by the note it reopens.
        brought = _need_open(target, back, event)
        target.put_note(close_note(brought, event, NoteStatus.CONTRADICTED, note.id))


def _on_digest_line(target: FoldTarget, event: Event) -> None:
    body = body_as(event.body, DigestLineAdded)
    scope = body.scope or Scope.UNSPECIFIED
    target.add_digest(DigestLine(event.seq, event.at, body.conversation, scope))


def _on_profile(target: FoldTarget, event: Event) -> None:
    target.set_profile(event.seq)


def _on_checkpoint(target: FoldTarget, event: Event) -> None:
    body = body_as(event.body, ExtractionCheckpoint)
    target.mark_processed(body.conversation, list(body.turns))


def _on_item_used(target: FoldTarget, event: Event) -> None:
    cause, body = event.cause, body_as(event.body, ItemUsed)
    for rank, note_id in enumerate(body.notes, start=1):
        usage = Usage(
            seq=event.seq,
            at=event.at,
            via=body.via_name,
            rank=rank,
            conversation=cause.conversation if cause else None,
            turn=cause.turn if cause else None,
        )
        target.add_usage(note_id, usage)


def _audit_only(target: FoldTarget, event: Event) -> None:
    """The event is in the audit log and changes nothing the fold keeps."""


# Events that change no note, candidate, digest, profile or usage: they only move the seq.
AUDIT_ONLY = frozenset(
    {
        EventType.PERSON_CREATED,
        EventType.EXPORTED,
        EventType.REVIEW_COPY_MADE,
        EventType.REVIEW_IMPORTED,
    }
)

_HANDLERS: dict[EventType, Any] = {
    **dict.fromkeys(AUDIT_ONLY, _audit_only),
    EventType.NOTE_ADDED: _on_note_added,
    EventType.RESTATED: _on_restated,
    EventType.CONTRADICTED: _on_contradicted,
    EventType.CORRECTED: _on_corrected,
    EventType.SCOPE_CHANGED: _on_scope_changed,
    EventType.DELETED: _on_deleted,
    EventType.MERGED: _on_merged,
    EventType.RETIRED: _closer(NoteStatus.RETIRED),
    EventType.DUPLICATE_REMOVED: _closer(NoteStatus.REMOVED),
    EventType.PROFILE_REBUILT: _on_profile,
    EventType.DIGEST_LINE_ADDED: _on_digest_line,
    EventType.CONVERSATION_DELETED: _on_conversation_deleted,
    EventType.REOPENED: _on_reopened,
    EventType.CANDIDATE_SUGGESTED: on_candidate_suggested,
    EventType.CANDIDATE_REVIEWED: on_candidate_reviewed,
    EventType.CANDIDATE_APPLIED: on_candidate_applied,
    EventType.EXTRACTION_CHECKPOINT: _on_checkpoint,
    EventType.ITEM_USED: _on_item_used,
    EventType.UNDONE: _on_undone,
}
