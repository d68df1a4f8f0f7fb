"""The recent-conversation digest (M4) — pure: the port, and the rule extractor's line.

A digest line says in a few words what one conversation was about, for the fifth section
of the turn block (A3). It is written through the extractor port, like notes: the rule
extractor makes a short line from the words the person used most (honest: nothing it did
not read), the OpenAI-compatible adapter asks its model for one. Either way the line only
draws on the bounded, visible turns of the conversation (W8's limits).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from engram.engine.extraction import VisibleTurn
from engram.engine.words import STOP_WORDS, fold

MAX_LINE_CHARS = 160
TOPIC_WORDS = 3
_WORD = re.compile(r"[^\W\d_][^\W_]{3,}")  # four letters or more
# Words that carry no topic in conversation ("really", "thanks"): left out of a line.
_FILLER = frozenset(
    [
        "about",
        "again",
        "also",
        "always",
        "anything",
        "because",
        "before",
        "being",
        "could",
        "doing",
        "done",
        "down",
        "even",
        "ever",
        "every",
        "from",
        "going",
        "good",
        "great",
        "have",
        "hello",
        "here",
        "just",
        "know",
        "like",
        "little",
        "look",
        "made",
        "make",
        "many",
        "more",
        "most",
        "much",
        "need",
        "okay",
        "only",
        "other",
        "over",
        "please",
        "pretty",
        "really",
        "right",
        "said",
        "same",
        "should",
        "some",
        "something",
        "still",
        "sure",
        "take",
        "tell",
        "thank",
        "thanks",
        "that",
        "then",
        "there",
        "these",
        "thing",
        "things",
        "think",
        "though",
        "very",
        "want",
        "well",
        "what",
        "when",
        "where",
        "which",
        "while",
        "will",
        "with",
        "would",
        "yeah",
        "your",
        "yours",
        "also",
        "into",
        "last",
        "next",
        "soon",
        "today",
        "tomorrow",
        "yesterday",
        "week",
        "month",
        "year",
    ]
)


@dataclass(frozen=True, slots=True)
class DigestRequest:
    """What writing one conversation's digest line may see."""

    turns: tuple[VisibleTurn, ...]


@runtime_checkable
class DigestWriter(Protocol):
    """The port's digest side: one short line for a conversation, or None."""

    def digest_line(self, request: DigestRequest) -> str | None: ...


def topic_words(turns: Sequence[VisibleTurn], count: int = TOPIC_WORDS) -> list[str]:
    """The person's most used words in their own turns, most used first (ties: first said)."""
    seen: dict[str, tuple[int, int, str]] = {}  # folded -> (uses, first position, form)
    position = 0
    for turn in turns:
        if turn.role != "user" or not turn.by_subject:
            continue  # the person's own words (W8), never the assistant's
        for sentence_start, match in _words(turn.text):
            word = match.group()
            key = fold(word)
            position += 1
            if key in STOP_WORDS or key in _FILLER:
                continue
            uses, first, form = seen.get(key, (0, position, ""))
            if not form:  # a capital that only starts a sentence is not part of the word
                form = word.lower() if sentence_start else word
            seen[key] = (uses + 1, first, form)
    ranked = sorted(seen.values(), key=lambda v: (-v[0], v[1]))
    return [form for _, _, form in ranked[:count]]


def _words(text: str) -> list[tuple[bool, re.Match[str]]]:
    found = []
    for match in _WORD.finditer(text):
        before = text[: match.start()].rstrip()
        found.append((not before or before[-1] in ".!?\n", match))
    return found


def rule_line(request: DigestRequest) -> str | None:
    """The rule extractor's line: what the person talked about, in their own words."""
    words = topic_words(request.turns)
    if not words:
        return None
    listed = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
    return f"Talked about {listed}."[:MAX_LINE_CHARS]


def tidy_line(text: str | None) -> str | None:
    """An extractor's line made safe to keep: one line, bounded, or None when empty."""
    if not text:
        return None
    line = " ".join(text.split())
    return line[:MAX_LINE_CHARS] if line else None
