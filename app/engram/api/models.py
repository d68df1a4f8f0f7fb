"""The HTTP API's request and response bodies as pydantic models: FastAPI validates
requests against them and the OpenAPI document is generated from them.

Requests refuse fields they do not name (a typo'd `scop` is an error, never a silent
default) and take numbers and flags only as JSON numbers and booleans.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from engram.engine.recall import RecallStatus
from engram.model.notes import NoteStatus
from engram.model.scope import Durability, Kind, Scope


class Body(BaseModel):
    """A request body: every field named, nothing else accepted."""

    model_config = ConfigDict(extra="forbid")


class Answer(BaseModel):
    """A response body; later versions may add fields."""

    model_config = ConfigDict(extra="allow")


# ---- requests ----------------------------------------------------------------------------


class NewItem(Body):
    """A note the person (through the application) adds to their own memory."""

    text: StrictStr = Field(min_length=1, max_length=4000)
    kind: Kind
    scope: Scope = Scope.DIRECT
    durability: Durability = Durability.LASTING


class SearchRequest(Body):
    """Words to look for among the notes the person may receive."""

    query: StrictStr = Field(min_length=1, max_length=500)
    limit: StrictInt | None = Field(default=None, ge=1, le=25)


class ItemPatch(Body):
    """A new text (a new version, C5), a new scope, or both."""

    text: StrictStr | None = Field(default=None, min_length=1, max_length=4000)
    scope: Scope | None = None


class ItemDelete(Body):
    """Why the note is deleted (optional; kept in the audit)."""

    reason: StrictStr | None = Field(default=None, max_length=1000)


class Decision(Body):
    """A reviewer's decision on the revision of a candidate they saw (P6)."""

    decision: Literal["approve", "reject"]
    revision: StrictInt = Field(ge=0)
    reason: StrictStr | None = Field(default=None, max_length=1000)
    apply: StrictBool = False


class TurnRequest(Body):
    """The conversation a turn happens in; the person comes from the trusted header and
    must be one of its participants (S3)."""

    conversation: StrictStr = Field(min_length=1, max_length=120)


class RecallRequest(TurnRequest):
    """The conversation, and how many notes at most."""

    limit: StrictInt | None = Field(default=None, ge=1, le=25)


# ---- responses ---------------------------------------------------------------------------


class ErrorAnswer(BaseModel):
    """Every refusal: one plain sentence."""

    error: str


class Health(BaseModel):
    """The server is up."""

    ok: bool


class Source(Answer):
    """Where a note was learned."""

    conversation: str | None = None
    turn: str | None = None
    at: str | None = None


class Item(Answer):
    """A note in the CLI contract's JSON shape (DESIGN, CLI contract)."""

    id: str
    person: str
    kind: Kind
    scope: Scope
    durability: Durability
    text: str | None
    confidence_bp: int
    valid_from: str | None
    valid_to: str | None
    status: NoteStatus
    sources: list[Source]
    corroborators: list[str]
    actor: str | None = None


class UsageEntry(Answer):
    """One time the note went into a turn's context or a tool's answer."""

    at: str
    via: str
    rank: int
    conversation: str | None = None
    turn: str | None = None
    event: int


class ItemDetail(Item):
    """A note with its versions, confidence arithmetic, usage and history."""

    versions: list[Item]
    confidence: dict[str, object]
    usage: list[UsageEntry]
    history: list[dict[str, object]]


class ItemPage(BaseModel):
    """One page of notes in creation order; pass next_cursor to get the next."""

    items: list[Item]
    total: int
    next_cursor: str | None


class FoundItem(BaseModel):
    """A note that shares words with the query."""

    item_id: str
    kind: Kind
    text: str


class SearchAnswer(BaseModel):
    """The best matches first; `error` says when memory could not be read."""

    items: list[FoundItem]
    error: str | None = None


class UsageAnswer(BaseModel):
    """The note's usage (the injection ledger)."""

    usage: list[UsageEntry]


class Deleted(BaseModel):
    """The note's interval was closed; its record stays (C2)."""

    item_id: str
    deleted: bool


class Candidate(Answer):
    """A suggested note waiting for (or after) review."""

    id: str
    revision: int
    status: Literal["pending", "approved", "rejected", "applied"]
    kind: Kind
    scope: Scope
    text: str | None
    applied_note: str | None = None


class CandidateList(BaseModel):
    """The person's candidates, oldest first."""

    candidates: list[Candidate]


class PlacedNote(BaseModel):
    """A note that went into the block, at its rank in its section."""

    id: str
    rank: int
    section: str


class DroppedPart(BaseModel):
    """Something left out of the block, and why (the budget, an unreadable text, …)."""

    what: str
    reason: str
    note: str | None


class AssembleAnswer(BaseModel):
    """The system block a turn in the conversation gets, as the agent runtime builds it."""

    block: str
    notes: list[PlacedNote]
    dropped: list[DroppedPart]
    used: int
    budget: int
    notes_readable: bool


class RecalledNote(BaseModel):
    """A note recall returned."""

    id: str
    kind: Kind
    scope: Scope
    confidence_bp: int
    text: str


class RecallAnswer(BaseModel):
    """What memory_recall gives the conversation's agent: `status` tells an empty memory
    from a restricted audience or an unreadable store (R2)."""

    status: RecallStatus
    message: str | None
    notes: list[RecalledNote]
    digest: list[str]
