"""Lexical search over a conversation's messages (H1, H2) — pure, no I/O; the index lives
in memory (`MessageIndex`) and is fed by the layers above.

Relevance: the score is the number of distinct query words a message contains; ties go
to the newer message. Words are compared after Unicode normalisation (NFKC, case folded,
accents stripped), without punctuation or stop words, and by a light stem so that "plans",
"planned" and "planning" meet "plan".
"""

from __future__ import annotations

import functools
import heapq
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

DEFAULT_LIMIT = 5
MAX_LIMIT = 25
EXCERPT_CHARS = 160
NO_MATCH_HINT = (
    "nothing in this conversation matched; try fewer or different words, or switch mode to "
    "see what is there another way"
)
MORE_HINT = "more messages matched; ask for a higher limit (25 at most) or narrow the query"

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "ours",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "too",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
    ]
)
_SUFFIXES = ("ingly", "edly", "ing", "ied", "ies", "ed", "es", "ly", "s")


@dataclass(frozen=True, slots=True)
class Message:
    """A searchable message: its turn id, position (higher is newer) and text."""

    turn: str
    position: int
    text: str


@dataclass(frozen=True, slots=True)
class Match:
    """One result."""

    turn: str
    score: int
    excerpt: str


@dataclass(frozen=True, slots=True)
class FindResult:
    """What conversation_find returns."""

    matches: tuple[Match, ...]
    truncated: bool
    hint: str | None


def _fold(text: str) -> str:
    if text.isascii():
        return text.lower()  # the same as the full fold below, for a fraction of the cost
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A light suffix stripper: enough to meet plurals and verb forms, never below 3 letters."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # planned -> plann -> plan
    return word


def terms(text: str) -> set[str]:
    """The comparable words of a text."""
    return {stem(w) for w in _WORD.findall(_fold(text)) if w not in STOP_WORDS}


def clamp(limit: int | None) -> int:
    """5 by default, 25 at most (H1)."""
    if limit is None:
        return DEFAULT_LIMIT
    return max(1, min(MAX_LIMIT, limit))


def excerpt(text: str, start: int, end: int, width: int = EXCERPT_CHARS) -> str:
    """A window of `text` around [start, end), marked with ellipses where cut."""
    room = max(0, width - (end - start)) // 2
    left, right = max(0, start - room), min(len(text), end + room)
    flat = " ".join(text[left:right].split())
    return ("…" if left > 0 else "") + flat + ("…" if right < len(text) else "")


class MessageIndex:
    """Messages with an inverted index from each term to the positions that hold it.

    Relevance search then counts postings instead of re-reading every message; messages can
    be added as a log grows and removed when their content is excised (H5).
    """

    __slots__ = ("_messages", "_postings")

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: dict[int, Message] = {}
        # term -> positions holding it; lists (not sets): building is the hot path and
        # removal (an excision) is rare
        self._postings: dict[str, list[int]] = {}
        for message in messages:
            self.add(message)

    def __len__(self) -> int:
        return len(self._messages)

    def add(self, message: Message) -> None:
        """Index one message; a message at the same position is replaced."""
        if message.position in self._messages:
            self.remove(message.position)
        self._messages[message.position] = message
        postings = self._postings
        for term in terms(message.text):
            holders = postings.get(term)
            if holders is None:
                postings[term] = [message.position]
            else:
                holders.append(message.position)

    def remove(self, position: int) -> None:
        """Forget a message (its content was excised); unknown positions are ignored."""
        message = self._messages.pop(position, None)
        if message is None:
            return
        for term in terms(message.text):
            holders = self._postings[term]
            holders.remove(position)
            if not holders:
                del self._postings[term]

    def holders(self, term: str) -> Sequence[int]:
        """The positions of the messages that hold a (normalised) term."""
        return self._postings.get(term, ())

    def messages(self) -> list[Message]:
        """Every indexed message, oldest first."""
        return sorted(self._messages.values(), key=lambda m: m.position)

    def find_relevant(self, query: str, limit: int | None) -> FindResult:
        """H1: rank by the number of query words matched, newer first on ties."""
        wanted = terms(query)
        scores: Counter[int] = Counter()
        for term in wanted:
            scores.update(self._postings.get(term, ()))
        count = clamp(limit)
        best = heapq.nlargest(count, zip(scores.values(), scores.keys(), strict=True))
        matches = tuple(
            Match(message.turn, score, word_excerpt(message.text, wanted))
            for score, position in best
            for message in (self._messages[position],)
        )
        return _result(matches, len(scores) > count)


def find_relevant(messages: Iterable[Message], query: str, limit: int | None) -> FindResult:
    """H1 over a plain list of messages (indexes them first)."""
    return MessageIndex(messages).find_relevant(query, limit)


def word_excerpt(text: str, wanted: set[str]) -> str:
    """An excerpt around the first word of `text` among the `wanted` terms."""
    for found in _WORD.finditer(text):
        if stem(_fold(found.group())) in wanted:
            return excerpt(text, found.start(), found.end())
    return excerpt(text, 0, 0)


def find_pattern(
    messages: Sequence[Message],
    pattern: str,
    limit: int | None,
    search: Callable[[str], tuple[int, int] | None],
) -> FindResult:
    """H2: newest first; `search(text)` returns (start, end) of the first match or None.

    The caller supplies `search` (literal or a time-bounded regular expression), so this
    stays pure and a hostile pattern is the caller's to bound.
    """
    count = clamp(limit)
    found: list[Match] = []
    more = False
    for message in sorted(messages, key=lambda m: -m.position):
        span = search(message.text)
        if span is None:
            continue
        if len(found) == count:
            more = True
            break
        found.append(Match(message.turn, 1, excerpt(message.text, span[0], span[1])))
    return _result(tuple(found), more)


def _result(matches: tuple[Match, ...], truncated: bool) -> FindResult:
    if not matches:
        return FindResult((), False, NO_MATCH_HINT)
    return FindResult(matches, truncated, MORE_HINT if truncated else None)


def cut_middle(text: str, keep: int) -> tuple[str, bool, int]:
    """H3: a long text keeps its start and end; returns (text, truncated, characters cut)."""
    if len(text) <= keep:
        return text, False, 0
    head = keep // 2
    tail = keep - head
    cut = len(text) - keep
    return (
        f"{text[:head]}\n[… {cut:,} characters cut from the middle …]\n{text[-tail:]}",
        True,
        cut,
    )
