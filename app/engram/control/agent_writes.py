"""An agent's own writes to its person's notes, under its configuration (P2, P5).

For faces where an agent's code writes memory directly rather than through the typed
memory tools (the LangGraph store adapter). The rules are the other faces':

- a new note needs `memory.tools.remember` on and a kind the agent may write, as over
  HTTP; correcting and deleting what is kept are never switched off (AgentConfig);
- with learning mode `suggest`, or a sensitive text in `automatic` mode, a new note or a
  correction becomes a pending candidate a person reviews (P5), never a note;
- a correction is a new version (C5), a deletion closes the note and keeps its record (C2);
- every event is recorded under the session's actor, the agent's (`agent:NAME`), so the
  inspector's audit shows who wrote what;
- a write citing a conversation is refused when the conversation is gone, incognito or
  not the person's (W4, W7).
"""

from __future__ import annotations

from dataclasses import dataclass

from engram.control import notes as memory_control
from engram.control.session import PersonSession
from engram.model.agents import AgentConfig, LearningMode
from engram.model.events import Cause
from engram.model.ids import CandidateId, ConversationId, NoteId
from engram.model.notes import Note
from engram.model.scope import Scope
from engram.runtime.note_writes import NoteDraft, check_text, suggestion, writable_conversation
from engram.runtime.sensitive_lexicon import sensitive_category
from engram.store import journal

AGENT_NOTE_CONFIDENCE_BP = 6_000  # an agent's word for it, as sure as a first extraction


def actor_of(config: AgentConfig) -> str:
    """The actor id an agent's writes are recorded under."""
    return f"agent:{config.name}"


@dataclass(frozen=True, slots=True)
class Written:
    """What a write left: the note that holds now, or the candidate awaiting review."""

    note: NoteId | None = None
    candidate: CandidateId | None = None


def _for_review(config: AgentConfig, text: str) -> bool:
    """P5: what waits for a person instead of becoming a note."""
    mode = config.learning.mode
    if mode is LearningMode.SUGGEST:
        return True
    found = sensitive_category(text)
    return found is not None and found not in config.learning.auto_apply


def remember(
    session: PersonSession,
    config: AgentConfig,
    draft: NoteDraft,
    conversation: ConversationId | None,
    note_id: NoteId | None = None,
) -> Written:
    """A new note (with id `note_id` if given), or a candidate that becomes it."""
    config.require_remember()
    config.require_writable(draft.kind)
    if _for_review(config, draft.text):
        return Written(candidate=_suggest(session, draft, conversation, as_note=note_id))
    note = memory_control.add_note(
        session,
        draft.text,
        draft.kind,
        draft.scope,
        durability=draft.durability,
        confidence_bp=draft.confidence_bp,
        conversation=conversation,
        create_person=True,
        note_id=note_id,
    )
    return Written(note=note)


def revise(
    session: PersonSession,
    config: AgentConfig,
    note: Note,
    current_text: str,
    text: str,
    scope: Scope | None,
    conversation: ConversationId | None,
) -> Written:
    """A new version of an active note (C5), or a candidate that would replace it; the
    same words and scope again change nothing."""
    config.require_writable(note.kind)
    cleaned = check_text(text)
    if cleaned == current_text.strip() and scope in (None, note.scope):
        return Written(note=note.id)
    if _for_review(config, cleaned):
        draft = NoteDraft(cleaned, note.kind, scope or note.scope, note.durability)
        return Written(candidate=_suggest(session, draft, conversation, contradicts=note.id))
    text_change = None if cleaned == current_text.strip() else cleaned
    return Written(note=memory_control.edit_note(session, note.id, text=text_change, scope=scope))


def forget(session: PersonSession, note: NoteId) -> None:
    """Close an active note's interval; its record and audit stay (C2)."""
    memory_control.delete_note(session, note, "deleted by the agent")


def _suggest(
    session: PersonSession,
    draft: NoteDraft,
    conversation: ConversationId | None,
    *,
    as_note: NoteId | None = None,
    contradicts: NoteId | None = None,
) -> CandidateId:
    store, person = session.store, session.person
    cause = Cause(conversation) if conversation else None
    detected = sensitive_category(draft.text)  # P5
    candidate, event = suggestion(
        draft,
        session.actor,
        session.actor,
        cause,
        sensitive=detected is not None,
        category=detected.value if detected else None,
        ambiguous=False,
        contradicts=contradicts,
        as_note=as_note,
    )
    with store.write() as txn:
        if conversation is not None:
            writable_conversation(txn, person, conversation)  # W4, W7
        else:
            journal.ensure_person(store, txn, person, actor=session.actor)
        journal.append(store, txn, person, [event])
    return candidate
