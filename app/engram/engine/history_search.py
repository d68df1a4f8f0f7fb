"""Lexical search over a conversation's messages (H1, H2) — pure, no I/O; the index lives
in memory (`MessageIndex`) and is fed by the layers above.

Relevance: the score is the number of the query's words a message contains, counting
only words that are not common in the messages searched; ties go to the newer message.
What a word is (folding, stop words, the Snowball stemmer of the conversation's language)
is `engine.words`.

Best match (`MessageIndex.find_best`, issue 18 item 14): BM25 (`engine.bm25`) over the same
postings, for the searches no seed rule binds (the inspector's person-wide search).
"""

from __future__ import annotations

import heapq
import struct
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from engram.engine import bm25
from engram.engine.words import DEFAULT_LANGUAGE, find_word, terms

DEFAULT_LIMIT = 5
MAX_LIMIT = 25
EXCERPT_CHARS = 160
NO_MATCH_HINT = (
    "nothing in this conversation matched; try fewer or different words, or switch mode to "
    "see what is there another way"
)
MORE_HINT = "more messages matched; ask for a higher limit (25 at most) or narrow the query"
# H1: a query word in more than one in COMMON_SHARE of the messages searched, and in more
# than COMMON_MIN of them, is a stop word for that search
COMMON_SHARE = 10
COMMON_MIN = 5


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


# A term's postings: the positions holding it, packed as C ints in a bytearray, which the
# garbage collector does not track (lists and arrays it does, and a person's index holds
# hundreds of thousands of postings: each full collection would walk them all)
_POSITION = struct.Struct("i")  # the layout of array("i")


def _positions(packed: bytes | bytearray) -> array[int]:
    return array("i", packed)


class MessageIndex:
    """Messages with an inverted index from each term to the positions that hold it.

    A term's postings are also its document frequency, kept up to date as messages are
    added (the log grows) or removed (their content is excised, H5); so relevance search
    tells common words from the rest and counts postings without re-reading any message.
    Terms are stemmed in the index's `language` (a Snowball algorithm name).
    """

    __slots__ = ("_lengths", "_messages", "_postings", "_total_length", "language")

    def __init__(self, messages: Iterable[Message] = (), language: str = DEFAULT_LANGUAGE) -> None:
        self.language = language
        self._messages: dict[int, Message] = {}
        # term -> its postings (above): building is the hot path, removal (an excision) rare
        self._postings: defaultdict[str, bytearray] = defaultdict(bytearray)
        # a message's number of distinct terms, and their sum: BM25's document lengths
        self._lengths: dict[int, int] = {}
        self._total_length = 0
        for message in messages:
            self.add(message)

    def __len__(self) -> int:
        return len(self._messages)

    def add(self, message: Message) -> None:
        """Index one message; a message at the same position is replaced."""
        position = message.position
        if position in self._messages:
            self.remove(position)
        self._messages[position] = message
        packed = _POSITION.pack(position)
        postings = self._postings
        held = terms(message.text, self.language)
        self._lengths[position] = len(held)
        self._total_length += len(held)
        for term in held:
            postings[term].extend(packed)

    def remove(self, position: int) -> None:
        """Forget a message (its content was excised); unknown positions are ignored."""
        message = self._messages.pop(position, None)
        if message is None:
            return
        self._total_length -= self._lengths.pop(position)
        for term in terms(message.text, self.language):
            holders = _positions(self._postings[term])
            holders.remove(position)
            if holders:
                self._postings[term] = bytearray(holders.tobytes())
            else:
                del self._postings[term]

    def in_language(self, language: str) -> MessageIndex:
        """This index, or the same messages indexed anew in another language."""
        if language == self.language:
            return self
        return MessageIndex(self.messages(), language)

    def holders(self, term: str) -> Sequence[int]:
        """The positions of the messages that hold a (normalised) term."""
        return _positions(self._postings.get(term, b""))

    def messages(self) -> list[Message]:
        """Every indexed message, oldest first."""
        return sorted(self._messages.values(), key=lambda m: m.position)

    def counted_terms(self, query: str) -> set[str]:
        """H1: the query's words that count in this search — those some message holds,
        less the common ones (in more than one in ten messages and more than five), unless
        every word that matches is common: then they all count."""
        searched = len(self._messages)
        found = {
            t: len(h) // _POSITION.size
            for t in terms(query, self.language)
            if (h := self._postings.get(t))
        }
        common = {
            term
            for term, frequency in found.items()
            if frequency > COMMON_MIN and frequency * COMMON_SHARE > searched
        }
        return found.keys() - common or set(found)

    def find_relevant(self, query: str, limit: int | None) -> FindResult:
        """H1: rank by the number of counted query words matched, newer first on ties."""
        wanted = self.counted_terms(query)
        scores: Counter[int] = Counter()
        for term in wanted:
            scores.update(_positions(self._postings[term]))
        count = clamp(limit)
        best = heapq.nlargest(count, zip(scores.values(), scores.keys(), strict=True))
        matches = tuple(
            Match(message.turn, score, word_excerpt(message.text, wanted, self.language))
            for score, position in best
            for message in (self._messages[position],)
        )
        return _result(matches, len(scores) > count)

    def find_best(self, query: str, limit: int | None) -> FindResult:
        """Best match first by BM25 over the query's words (no H1 common-word rule: the
        weights tell common words from rare ones), newer first on ties; a match's score
        is the number of query words it holds."""
        wanted = {t for t in terms(query, self.language) if t in self._postings}
        searched = len(self._messages)
        postings = [(t, _positions(self._postings[t])) for t in wanted]
        scored = bm25.scores(
            ((bm25.idf(len(held), searched), held) for _, held in postings),
            self._lengths.__getitem__,
            self._total_length / searched if searched else 0.0,
        )
        count = clamp(limit)
        matches = tuple(
            Match(
                message.turn,
                len(terms(message.text, self.language) & wanted),
                word_excerpt(message.text, wanted, self.language),
            )
            for position in bm25.best(scored, count)
            for message in (self._messages[position],)
        )
        return _result(matches, len(scored) > count)


def find_relevant(
    messages: Iterable[Message], query: str, limit: int | None, language: str = DEFAULT_LANGUAGE
) -> FindResult:
    """H1 over a plain list of messages (indexes them first)."""
    return MessageIndex(messages, language).find_relevant(query, limit)


def word_excerpt(text: str, wanted: set[str], language: str = DEFAULT_LANGUAGE) -> str:
    """An excerpt around the first word of `text` among the `wanted` terms."""
    span = find_word(text, wanted, language)
    return excerpt(text, *span) if span else excerpt(text, 0, 0)


def find_pattern(
    messages: Sequence[Message],
    pattern: str,
    limit: int | None,
    search: Callable[[str], tuple[int, int] | None],
) -> FindResult:
    """H2: newest first; `search(text)` returns (start, end) of the first match or None.

    The caller supplies `search` (engine.pattern's literal-or-RE2 match, run by
    runtime.pattern_search under a time budget), so this stays pure.
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
