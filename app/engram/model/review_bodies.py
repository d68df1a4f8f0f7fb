"""Journal event bodies of an offline review (issue 21 items 2-4), catalogued in
`event_bodies`; the fold treats both as audit-only.

- `ReviewCopyMade` opens the review in the copy: which store and journal position the copy
  came from, when, and the live store's signature over that, which is what lets the live
  store recognise its own copy (and refuse one made or re-keyed elsewhere).
- `ReviewImported` records, in the live store, what became of one of the reviewer's
  decisions: applied, or a conflict with what changed meanwhile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from engram.model.event_body_base import EventBody, Json, optional_note, present, put
from engram.model.ids import CandidateId, NoteId


@dataclass(frozen=True, slots=True)
class ReviewCopyMade(EventBody):
    """A review copy of one person was taken from store `source` through journal position
    `through` (whose entry hash is `head`) at `taken_at`, as a new store `copy` whose
    signing key is `copy_key`; `signature` is the source store's over all of that."""

    source: str
    source_key: str  # hex of the source store's public signing key
    copy: str
    copy_key: str  # hex of the copy's public signing key
    through: int
    head: str  # hex
    taken_at: str  # ISO-8601
    signature: str = ""  # hex; empty only while the body is being signed

    def signed_part(self) -> Json:
        """What the source store signs: every field but the signature."""
        return {
            "source": self.source,
            "source_key": self.source_key,
            "copy": self.copy,
            "copy_key": self.copy_key,
            "through": self.through,
            "head": self.head,
            "taken_at": self.taken_at,
        }

    def to_json(self) -> Json:
        return {**self.signed_part(), "signature": self.signature}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        return cls(
            str(data["source"]),
            str(data["source_key"]),
            str(data["copy"]),
            str(data["copy_key"]),
            int(data["through"]),
            str(data["head"]),
            str(data["taken_at"]),
            str(data.get("signature", "")),
        )


@dataclass(frozen=True, slots=True)
class ReviewImported(EventBody):
    """The reviewer's decision at position `decision_seq` of review copy `copy`, made at
    `decided_at`, came back: `outcome` is "applied" or "conflict" (it was not)."""

    copy: str
    decision_seq: int
    decision: str  # approved, rejected, applied, corrected, rescoped, deleted
    decided_at: str  # ISO-8601
    outcome: str
    imported_by: str
    note: NoteId | None = None
    candidate: CandidateId | None = None

    def to_json(self) -> Json:
        data: Json = {
            "copy": self.copy,
            "decision_seq": self.decision_seq,
            "decision": self.decision,
            "decided_at": self.decided_at,
            "outcome": self.outcome,
            "imported_by": self.imported_by,
        }
        put(data, "note", self.note)
        return put(data, "candidate", self.candidate)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        candidate = data.get("candidate")
        return cls(
            str(data["copy"]),
            int(data["decision_seq"]),
            str(data["decision"]),
            str(data["decided_at"]),
            str(data["outcome"]),
            str(data["imported_by"]),
            optional_note(data, "note"),
            CandidateId(str(candidate)) if candidate else None,
        )

    def named_notes(self) -> tuple[NoteId, ...]:
        return present(self.note)
