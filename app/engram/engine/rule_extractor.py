"""The offline extractor: deterministic patterns over the person's own sentences.

It is the default adapter and the one tests use. It reads only the subject's user turns
(W8), sentence by sentence, skips questions and negated or reported speech it cannot read
safely, and knows a handful of English statement shapes — where someone lives and works,
their name, likes and dislikes, how they want answers, what they need to remember. Each
proposal carries a topic ("home", "employer", "likes:tea"…); a new value for a topic
already held by a note shown to it contradicts that note, the same value restates it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engram.engine.digest import DigestRequest, rule_line
from engram.engine.extraction import ExtractionRequest, KnownNote, Proposal
from engram.model.scope import Durability, Kind

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_HEDGE = re.compile(r"\b(maybe|perhaps|probably|i think|i guess|not sure|might|kind of)\b", re.I)
_NOW = re.compile(
    r"\b(today|tonight|right now|at the moment|this (morning|afternoon|evening|week))\b", re.I
)
_REPORTED = re.compile(r"\b(he|she|they|my \w+) (said|says|thinks?|told)\b", re.I)
_VALUE = r"([A-Za-z0-9][^.,;!?()]{0,60}?)"
# When something happened ends the value: the time belongs to the note's validity
# interval, not to its text ("I moved to Grenoble last month." -> "Lives in Grenoble.").
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_COUNT = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+|a few|a couple of|several)"
_WHEN = (
    r" (?:since |from )?(?:last|this|next|past) "
    r"(?:week|month|year|summer|winter|spring|autumn|fall|weekend)\b"
    r"| (?:yesterday|recently|lately|earlier)\b"
    rf"| {_COUNT} (?:days?|weeks?|months?|years?) ago\b"
    rf"| (?:in|since|back in|last) (?:{_MONTHS}|(?:19|20)\d\d)\b"
    r"| on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
)
_END = (
    r"\s*(?:,|;|\.|!|$| and | but | because | so | please\b| now\b| these days\b"
    r"| for \w+ years?\b|" + _WHEN + ")"
)


@dataclass(frozen=True, slots=True)
class _Shape:
    """One statement shape: how it is said, the note it becomes, and what it is about.

    `topic` is a content-free category ("home", "language"…) and may be stored in the
    clear; a `keyed` shape's topic also holds the value ("taste:green tea"), so it is only
    compared in memory, never written down.
    """

    pattern: re.Pattern[str]
    kind: Kind
    topic: str
    template: str  # the note's text, "{}" standing for the value
    keyed: bool = False
    confidence_bp: int = 6_500

    def text(self, value: str) -> str:
        return self.template.format(value)

    def topic_for(self, value: str) -> str:
        return f"{self.topic}:{value.casefold()}" if self.keyed else self.topic

    def reads(self, note_text: str) -> str | None:
        """The topic of a note this shape would have written, or None."""
        head, _, tail = self.template.partition("{}")
        if note_text.startswith(head) and note_text.endswith(tail):
            value = note_text[len(head) : len(note_text) - len(tail)]
            return self.topic_for(value) if value else None
        return None


def _shape(
    regex: str,
    kind: Kind,
    topic: str,
    template: str,
    *,
    keyed: bool = False,
    confidence_bp: int = 6_500,
) -> _Shape:
    return _Shape(
        re.compile(r"\b" + regex + _END, re.I), kind, topic, template, keyed, confidence_bp
    )


_PRONOUNS = {"my": "their", "me": "them", "i": "they", "myself": "themself", "mine": "theirs"}
_PRONOUN = re.compile(r"\b(my|me|i|myself|mine)\b", re.IGNORECASE)


def _tidy(value: str) -> str:
    """The value as a note about the person says it: "my passport" -> "their passport"."""
    value = _PRONOUN.sub(lambda m: _PRONOUNS[m.group(0).lower()], value.strip())
    value = re.sub(r"^(The|A|An)\s+", lambda m: m.group(0).lower(), value)
    return value.rstrip(" .")


_SHAPES: tuple[_Shape, ...] = (
    _shape(r"my name is " + _VALUE, Kind.FACT, "name", "Is called {}."),
    _shape(r"call me " + _VALUE, Kind.STYLE, "address", "Wants to be called {}."),
    _shape(
        r"i(?:'ve| have)? (?:just )?moved to " + _VALUE,
        Kind.FACT,
        "home",
        "Lives in {}.",
        confidence_bp=7_000,
    ),
    _shape(r"i(?: currently| now)? live in " + _VALUE, Kind.FACT, "home", "Lives in {}."),
    _shape(
        r"i(?: currently| now)? work (?:at|for) " + _VALUE, Kind.FACT, "employer", "Works at {}."
    ),
    _shape(
        r"i(?:'m| am) allergic to " + _VALUE,
        Kind.FACT,
        "allergy",
        "Is allergic to {}.",
        keyed=True,
        confidence_bp=7_500,
    ),
    _shape(
        r"i(?:'m| am) (?:a |an )?(vegetarian|vegan|pescatarian)",
        Kind.FACT,
        "diet",
        "Follows a {} diet.",
        confidence_bp=7_000,
    ),
    _shape(
        r"i (?:really )?(?:like|love|enjoy|adore) " + _VALUE,
        Kind.PREFERENCE,
        "taste",
        "Likes {}.",
        keyed=True,
    ),
    _shape(r"i prefer " + _VALUE, Kind.PREFERENCE, "taste", "Prefers {}.", keyed=True),
    _shape(
        r"i (?:really )?(?:don't like|do not like|dislike|hate|can't stand) " + _VALUE,
        Kind.PREFERENCE,
        "taste",
        "Dislikes {}.",
        keyed=True,
    ),
    _shape(
        r"(?:please )?(?:keep|make) (?:it|your answers|answers|replies|things) "
        r"(short|brief|concise|detailed|simple)",
        Kind.STYLE,
        "tone",
        "Wants {} answers.",
    ),
    _shape(
        r"(?:please )?(?:answer|reply|respond|write) (?:to me )?in " + _VALUE,
        Kind.STYLE,
        "language",
        "Wants replies in {}.",
    ),
    _shape(
        r"remind me (?:to|about) " + _VALUE,
        Kind.OPEN_THREAD,
        "todo",
        "Asked to be reminded to {}.",
        keyed=True,
    ),
    _shape(
        r"i (?:still )?(?:need|have|want) to " + _VALUE,
        Kind.OPEN_THREAD,
        "todo",
        "Needs to {}.",
        keyed=True,
        confidence_bp=5_500,
    ),
)


def topic_of(note: KnownNote) -> str | None:
    """What a held note is about: read from its text when a shape wrote it, else its
    stored (content-free) topic."""
    for shape in _SHAPES:
        if shape.kind is note.kind and (topic := shape.reads(note.text)) is not None:
            return topic
    return note.topic


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def _unreadable(sentence: str) -> bool:
    """Questions and reported speech say nothing sure about the speaker."""
    return sentence.endswith("?") or _REPORTED.search(sentence) is not None


def _negated(sentence: str, start: int) -> bool:
    before = sentence[max(0, start - 12) : start].casefold()
    return bool(re.search(r"\b(not|never|no longer|don't|do not|didn't)\s*$", before))


def _same(a: str, b: str) -> bool:
    return a.casefold().rstrip(".") == b.casefold().rstrip(".")


def statements(sentence: str) -> list[tuple[_Shape, str]]:
    """Every statement a sentence makes, as (shape, value), left to right, none overlapping."""
    if _unreadable(sentence):
        return []
    found: list[tuple[int, int, _Shape, str]] = []
    for shape in _SHAPES:
        for match in shape.pattern.finditer(sentence):
            start, end = match.span()
            if _negated(sentence, start) or any(start < e and s < end for s, e, _, _ in found):
                continue
            if value := _tidy(match.group(1)):
                found.append((start, end, shape, value))
    return [(shape, value) for _, _, shape, value in sorted(found, key=lambda f: f[0])]


class RuleExtractor:
    """Deterministic, offline, explainable."""

    name = "rules"

    def digest_line(self, request: DigestRequest) -> str | None:
        """M4: what the person talked about, in their own most used words."""
        return rule_line(request)

    def extract(self, request: ExtractionRequest) -> Sequence[Proposal]:
        by_topic: dict[str, KnownNote] = {}
        for note in request.notes:  # best-ranked first: the first holder of a topic counts
            if (topic := topic_of(note)) is not None:
                by_topic.setdefault(topic, note)
        proposals: list[Proposal] = []
        for turn in request.turns:
            if turn.role != "user" or not turn.by_subject:
                continue  # W8: only what the person said about themself
            for sentence in _sentences(turn.text):
                hedged = _HEDGE.search(sentence) is not None
                lasting = Durability.TRANSIENT if _NOW.search(sentence) else Durability.LASTING
                for shape, value in statements(sentence):
                    text = shape.text(value)
                    held = by_topic.get(shape.topic_for(value))
                    restates = held.id if held and _same(held.text, text) else None
                    proposals.append(
                        Proposal(
                            kind=shape.kind,
                            text=text,
                            turn=turn.turn,
                            durability=lasting,
                            confidence_bp=shape.confidence_bp - (2_000 if hedged else 0),
                            topic=None if shape.keyed else shape.topic,
                            restates=restates,
                            contradicts=held.id if held and not restates else None,
                            ambiguous=hedged,
                        )
                    )
        return proposals
