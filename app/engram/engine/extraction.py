"""The extractor port and the rules every extractor's answer must pass (W3, W8, P5) — pure.

An extractor reads a bounded request — the visible turns of one conversation that have not
been analysed yet and at most 24 ranked active notes — and proposes notes: new ones, and
restatements or contradictions of the notes it was shown. Whatever it proposes, `admit`
keeps only what the rules allow, so an adapter (the offline rule extractor, or a model
behind an OpenAI-compatible endpoint) cannot widen what learning may do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from engram.engine.words import terms
from engram.model.ids import NoteId, TurnId
from engram.model.scope import Durability, Kind
from engram.model.sensitivity import SensitiveCategory

MAX_KNOWN_NOTES = 24  # W3
MAX_TURNS = 24  # the newest unanalysed turns of one conversation per request
MAX_TURN_CHARS = 2_000  # each turn is cut to this much before an extractor sees it
MAX_PROPOSAL_CHARS = 300
SAFE_CONFIDENCE_BP = 5_000  # automatic mode applies nothing less sure than this (P5)
# Topics are stored in the clear, so only these content-free categories are kept; any
# other topic an extractor names is dropped rather than written down.
STORABLE_TOPICS = frozenset({"name", "address", "home", "employer", "diet", "tone", "language"})

# P5: which sensitive category a text touches (the shipped lexicon's detector), or None.
Detector = Callable[[str], SensitiveCategory | None]


@dataclass(frozen=True, slots=True)
class VisibleTurn:
    """One turn as an extractor sees it: visible text only (no tool results, no reasoning)."""

    turn: TurnId
    role: str  # "user" or "assistant"
    text: str
    by_subject: bool  # a user turn written by the person being learned about


@dataclass(frozen=True, slots=True)
class KnownNote:
    """An active note shown to the extractor so it can restate or contradict it."""

    id: NoteId
    kind: Kind
    text: str
    topic: str | None = None


@dataclass(frozen=True, slots=True)
class ExtractionRequest:
    """What one extraction call may see."""

    turns: tuple[VisibleTurn, ...]
    notes: tuple[KnownNote, ...]
    kinds: frozenset[Kind] = frozenset(Kind)


@dataclass(frozen=True, slots=True)
class Proposal:
    """A note the extractor proposes, from one of the subject's own turns."""

    kind: Kind
    text: str
    turn: TurnId
    durability: Durability = Durability.LASTING
    confidence_bp: int = 6_000
    topic: str | None = None
    restates: NoteId | None = None
    contradicts: NoteId | None = None
    sensitive: bool = False
    ambiguous: bool = False
    category: str | None = None  # the sensitive category (P5), from the extractor or detector
    reason: str | None = None  # the extractor's reason it is sensitive, if it gave one


class Extractor(Protocol):
    """The port: given a bounded request, propose notes."""

    @property
    def name(self) -> str:
        """Recorded with every candidate it suggests."""
        ...

    def extract(self, request: ExtractionRequest) -> Sequence[Proposal]: ...


@dataclass(frozen=True, slots=True)
class Verdicts:
    """What `admit` kept and what it set aside, with reasons (for the pass's report)."""

    kept: tuple[Proposal, ...] = ()
    dropped: tuple[tuple[Proposal, str], ...] = field(default_factory=tuple)


def bounded(
    turns: Sequence[VisibleTurn], notes: Sequence[KnownNote], kinds: Collection[Kind]
) -> ExtractionRequest:
    """A request cut to the limits: the newest turns, each cut, and at most 24 notes."""
    kept = [
        VisibleTurn(t.turn, t.role, t.text[:MAX_TURN_CHARS], t.by_subject)
        for t in turns[-MAX_TURNS:]
    ]
    return ExtractionRequest(tuple(kept), tuple(notes[:MAX_KNOWN_NOTES]), frozenset(kinds))


def admit(request: ExtractionRequest, proposals: Sequence[Proposal], detect: Detector) -> Verdicts:
    """Keep only proposals the rules allow.

    W8: a proposal must come from a turn the subject wrote; an assistant's claim alone
    establishes nothing. W3: it may restate or contradict only a note it was shown.
    Kinds must be ones the agent learns; text is bounded; the sensitivity floor applies
    (P5): a proposal is sensitive when the extractor says so or `detect` finds a category.
    """
    own = {t.turn: terms(t.text) for t in request.turns if t.role == "user" and t.by_subject}
    shown = {n.id for n in request.notes}
    kept: list[Proposal] = []
    dropped: list[tuple[Proposal, str]] = []
    seen: set[tuple[Kind, str]] = set()
    for proposal in proposals:
        text = " ".join(proposal.text.split())
        reason = None
        if proposal.turn not in own:
            reason = "not from one of the person's own turns (W8)"
        elif not terms(text) & own[proposal.turn]:
            reason = "shares no words with the turn it cites (W8)"
        elif proposal.kind not in request.kinds:
            reason = f"this agent does not learn {proposal.kind.value} notes"
        elif not text or len(text) > MAX_PROPOSAL_CHARS:
            reason = "empty or too long"
        elif proposal.restates and proposal.contradicts:
            reason = "restates and contradicts at once"
        elif (proposal.restates or proposal.contradicts) not in (None, *shown):
            reason = "names a note it was not shown (W3)"
        elif not 0 <= proposal.confidence_bp <= 10_000:
            reason = "confidence out of range"
        elif (proposal.kind, text.casefold()) in seen:
            reason = "a repeat of another proposal"
        if reason:
            dropped.append((proposal, reason))
            continue
        seen.add((proposal.kind, text.casefold()))
        found = detect(text)
        category = proposal.category or (found.value if found else None)
        sensitive = proposal.sensitive or category is not None
        topic = proposal.topic if proposal.topic in STORABLE_TOPICS else None
        kept.append(
            dataclasses.replace(
                proposal, text=text, sensitive=sensitive, topic=topic, category=category
            )
        )
    return Verdicts(tuple(kept), tuple(dropped))


def policy_safe(
    proposal: Proposal, kinds: Collection[Kind], allowed: Collection[str] = frozenset()
) -> bool:
    """P5: what automatic mode may apply without a person: not sensitive (or of a sensitive
    category the agent names as allowed), not ambiguous, sure enough, and of a kind the
    agent learns. Everything else waits for review."""
    return (
        (not proposal.sensitive or proposal.category in allowed)
        and not proposal.ambiguous
        and proposal.confidence_bp >= SAFE_CONFIDENCE_BP
        and proposal.kind in kinds
    )
