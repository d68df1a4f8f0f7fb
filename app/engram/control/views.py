"""What control hands to faces: notes with text, in the CLI contract's JSON shape."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engram.engine.assembly import AssembledBlock
from engram.engine.recall import RecallResult
from engram.engine.scope import audience_for
from engram.model.clock import iso
from engram.model.conversation import ConversationInfo
from engram.model.ids import PersonId
from engram.model.notes import CONFIDENCE_CAP_BP, CORROBORATION_BP, Note, Usage

UNREADABLE = "[text removed: its source conversation was deleted]"


@dataclass(frozen=True, slots=True)
class NoteView:
    """A note and its text (None when the text was shredded with its conversation)."""

    note: Note
    text: str | None

    def to_json(self) -> dict[str, Any]:
        """The contract's note JSON plus provenance details."""
        note = self.note
        closure = note.closure
        return {
            "id": note.id,
            "person": note.person,
            "kind": note.kind.value,
            "scope": note.scope.value,
            "durability": note.durability.value,
            "topic": note.topic,
            "text": self.text,
            "confidence_bp": note.confidence_bp,
            "initial_confidence_bp": note.initial_confidence_bp,
            "valid_from": iso(note.valid_from),
            "valid_to": iso(note.valid_to),
            "status": note.status.value,
            "origin": note.origin,
            "sources": [
                {"conversation": s.conversation, "turn": s.turn, "at": iso(s.at)}
                for s in note.sources
            ],
            "corroborators": list(note.corroborators),
            "actor": note.actor,
            "supersedes": note.supersedes,
            "superseded_by": note.superseded_by,
            "closed_by": None
            if closure is None
            else {
                "type": closure.type.value,
                "at": iso(closure.at),
                "actor": closure.actor,
                "note": closure.by_note,
                "cause": closure.cause.to_json() if closure.cause else None,
            },
        }


def confidence_arithmetic(note: Note) -> dict[str, Any]:
    """F3 made visible: initial + 500 × corroborators, capped at 10,000."""
    count = len(note.corroborators)
    raw = note.initial_confidence_bp + CORROBORATION_BP * count
    return {
        "initial_bp": note.initial_confidence_bp,
        "corroborators": list(note.corroborators),
        "per_corroborator_bp": CORROBORATION_BP,
        "cap_bp": CONFIDENCE_CAP_BP,
        "uncapped_bp": raw,
        "confidence_bp": note.confidence_bp,
        "formula": (
            f"{note.initial_confidence_bp} + {CORROBORATION_BP} × {count} = {raw}"
            + (f", capped at {CONFIDENCE_CAP_BP}" if raw > CONFIDENCE_CAP_BP else "")
        ),
    }


def usage_json(usage: Usage) -> dict[str, Any]:
    """One entry of the injection ledger."""
    return {
        "at": iso(usage.at),
        "via": usage.via,
        "rank": usage.rank,
        "conversation": usage.conversation,
        "turn": usage.turn,
        "event": usage.seq,
    }


def conversation_json(info: ConversationInfo, person: PersonId) -> dict[str, Any]:
    """A conversation as listed for a person, with the audience it gives them (S3)."""
    return {
        "id": info.id,
        "created_at": iso(info.created_at),
        "surface": info.surface.value,
        "incognito": info.incognito,
        "agent": info.agent,
        "participants": list(info.participants),
        "audience": audience_for(person, info).kind.value,
    }


def assembled_json(block: AssembledBlock) -> dict[str, Any]:
    """`engram assemble --json`: the block, what went in at which rank, what was dropped."""
    return {
        "block": block.block,
        "notes": [{"id": p.note, "rank": p.rank, "section": p.section} for p in block.placed],
        "dropped": [{"what": d.what, "reason": d.reason, "note": d.note} for d in block.dropped],
        "used": block.used,
        "budget": block.budget,
        "notes_readable": block.notes_readable,
    }


def recall_json(result: RecallResult) -> dict[str, Any]:
    """`engram recall --json`."""
    return {
        "status": result.status.value,
        "message": result.message,
        "notes": [
            {
                "id": t.note.id,
                "kind": t.note.kind.value,
                "scope": t.note.scope.value,
                "confidence_bp": t.note.confidence_bp,
                "text": t.text,
            }
            for t in result.notes
        ],
        "digest": list(result.digest),
    }
