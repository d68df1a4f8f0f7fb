"""What a "word" is for lexical search (H1) — pure, no I/O.

A text's words are its tokens after Unicode normalisation (NFKC), case folding and accent
folding, without the language's stop words (Snowball's lists, engine.stop_words; English
keeps STOP_WORDS below), each reduced by the Snowball stemmer (PyStemmer) of the
conversation's language: English unless that language is known. Han, Kana and Hangul runs
are cut into character bigrams (issue 18 item 15).

Accents are folded on Latin and Greek letters only: elsewhere a combining mark is part of
the letter (Cyrillic й, the Devanagari nukta) and the language's stemmer expects it.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable
from itertools import filterfalse
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import Stemmer

from engram.engine.cjk_segments import CJK_RUN, cut_cjk, segments
from engram.engine.stop_words import SNOWBALL_STOP_WORDS

if TYPE_CHECKING:
    from collections.abc import Collection

DEFAULT_LANGUAGE = "english"
Span = tuple[int, int] | None

_WORD = re.compile(r"[^\W_]+")


def _marks() -> str:
    """A character class of the combining marks (Unicode category M) of the first two
    planes: `re`'s \\w leaves them out, which would cut "हिन्दी" or "தமிழ்" into pieces."""
    ranges: list[tuple[int, int]] = []
    for point in range(0x20000):
        if unicodedata.category(chr(point)).startswith("M"):
            if ranges and ranges[-1][1] == point - 1:
                ranges[-1] = (ranges[-1][0], point)
            else:
                ranges.append((point, point))
    return "".join(f"{chr(a)}-{chr(b)}" if b > a else chr(a) for a, b in ranges)


_MARKED_WORD = re.compile(f"(?:[^\\W_]|[{_marks()}])+")


def _word_spans(text: str) -> list[tuple[int, int]]:
    """Where each word of an unfolded text is, CJK runs as bigrams (engine.cjk_segments)."""
    spans: list[tuple[int, int]] = []
    for found in (_WORD if text.isascii() else _MARKED_WORD).finditer(text):
        start = found.start()
        if CJK_RUN.search(found.group()):
            spans.extend((start + a, start + b) for a, b in segments(found.group()))
        else:
            spans.append(found.span())
    return spans


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

# Language names as a profile's language note may give them (English and own names, folded
# as words are), each mapped to its Snowball algorithm. Only languages PyStemmer stems.
_NAMES = {
    "arabic": "arabic",
    "arabe": "arabic",
    "armenian": "armenian",
    "hayeren": "armenian",
    "basque": "basque",
    "euskara": "basque",
    "catalan": "catalan",
    "catala": "catalan",
    "czech": "czech",
    "cestina": "czech",
    "danish": "danish",
    "dansk": "danish",
    "dutch": "dutch",
    "nederlands": "dutch",
    "flemish": "dutch",
    "english": "english",
    "esperanto": "esperanto",
    "estonian": "estonian",
    "eesti": "estonian",
    "finnish": "finnish",
    "suomi": "finnish",
    "french": "french",
    "francais": "french",
    "german": "german",
    "deutsch": "german",
    "greek": "greek",
    "ελληνικα": "greek",
    "hindi": "hindi",
    "हिन्दी": "hindi",
    "हिंदी": "hindi",
    "hungarian": "hungarian",
    "magyar": "hungarian",
    "indonesian": "indonesian",
    "indonesia": "indonesian",
    "irish": "irish",
    "gaeilge": "irish",
    "italian": "italian",
    "italiano": "italian",
    "lithuanian": "lithuanian",
    "lietuviu": "lithuanian",
    "nepali": "nepali",
    "norwegian": "norwegian",
    "norsk": "norwegian",
    "bokmal": "norwegian",
    "persian": "persian",
    "farsi": "persian",
    "polish": "polish",
    "polski": "polish",
    "portuguese": "portuguese",
    "portugues": "portuguese",
    "romanian": "romanian",
    "romana": "romanian",
    "russian": "russian",
    "русский": "russian",
    "serbian": "serbian",
    "srpski": "serbian",
    "српски": "serbian",
    "sesotho": "sesotho",
    "sotho": "sesotho",
    "spanish": "spanish",
    "espanol": "spanish",
    "castellano": "spanish",
    "swedish": "swedish",
    "svenska": "swedish",
    "tamil": "tamil",
    "தமிழ்": "tamil",
    "turkish": "turkish",
    "turkce": "turkish",
    "yiddish": "yiddish",
}
LANGUAGES = frozenset(_NAMES.values())


def fold(text: str) -> str:
    """NFKC, case folded, accents on Latin and Greek letters removed."""
    if text.isascii():
        return text.lower()  # the same as the full fold below, for a fraction of the cost
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    kept: list[str] = []
    strip = False
    for char in decomposed:
        if not unicodedata.combining(char):
            strip = char < "\u0250" or "\u0370" <= char < "\u0400" or "\u1e00" <= char < "\u2000"
        elif strip:
            continue
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


# each language's own stop words, folded as words are (issue 18 item 15); English, and any
# language Snowball has no list for, keep STOP_WORDS
_STOP_BY_LANGUAGE = {
    language: frozenset(fold(word) for word in listed.split())
    for language, listed in SNOWBALL_STOP_WORDS.items()
}


def stop_words(language: str = DEFAULT_LANGUAGE) -> frozenset[str]:
    """The stop words of a language (its Snowball list; STOP_WORDS for English and any
    language Snowball lists none for)."""
    return _STOP_BY_LANGUAGE.get(_algorithm(language), STOP_WORDS)


def tokens(text: str, language: str = DEFAULT_LANGUAGE) -> list[str]:
    """The folded tokens of a text, the language's stop words left out, in order (repeats
    kept)."""
    stop = stop_words(language)
    folded = fold(text)
    if folded.isascii():
        found = _WORD.findall(folded)
    else:
        found = cut_cjk(_MARKED_WORD.findall(folded))
    return [w for w in found if w not in stop]


class _Stemmers(threading.local):
    """One stemmer per language and thread (a PyStemmer stemmer is not thread-safe)."""

    def __init__(self) -> None:
        self.by_language: dict[str, Stemmer.Stemmer] = {}

    def of(self, language: str) -> Stemmer.Stemmer:
        stemmer = self.by_language.get(language)
        if stemmer is None:
            # no cache of its own: the caches below are faster and shared by the threads
            stemmer = self.by_language[language] = Stemmer.Stemmer(language, 0)
        return stemmer

    def stem(self, language: str, word: str) -> str:
        stemmed: str = self.of(language).stemWord(word)
        return stemmed


_stemmers = _Stemmers()
CACHED_STEMS = 65_536  # words per language and cache (generation)


def _algorithm(language: str) -> str:
    """The Snowball algorithm stemming a language; unknown languages stem as English."""
    return language if language in LANGUAGES else DEFAULT_LANGUAGE


class _StemCache(dict[str, str]):
    """Folded word -> stem in one language, filled as words come (a hit is one dictionary
    lookup)."""

    __slots__ = ("algorithm",)

    def __init__(self, algorithm: str) -> None:
        super().__init__()
        self.algorithm = algorithm

    def __missing__(self, word: str) -> str:
        if len(self) >= CACHED_STEMS:
            self.clear()
        stemmed = self[word] = _stemmers.stem(self.algorithm, word)
        return stemmed


_caches: dict[str, _StemCache] = {}


def _stemmer(language: str) -> Callable[[str], str]:
    """The language's stemming function; unknown languages stem as English."""
    cache = _caches.get(language)
    if cache is None:
        cache = _caches.setdefault(language, _StemCache(_algorithm(language)))
    return cache.__getitem__


def stem(word: str, language: str = DEFAULT_LANGUAGE) -> str:
    """One folded word, stemmed."""
    return _stemmer(language)(word)


_STOP = "\0"  # a stop word's term in a _Terms cache (no word holds a NUL)
K = TypeVar("K", str, bytes)


class _Terms(Generic[K]):
    """Token -> its term (stem) or _STOP, in one language: what `terms` does per word,
    done once per distinct token. Building an index meets the same tokens over and over;
    a whole text's tokens are looked up at once (`map` over a plain dict, no Python call
    per token), with no folding, stop-word test or stemming for the tokens already met.

    Two generations: when the current one is full it becomes the older one and a new one
    starts, and a token met again is taken from the older one rather than stemmed again,
    so a stream of words that never repeat (numbers, names) cannot evict the common ones.
    """

    __slots__ = ("algorithm", "known", "older", "stop", "word")

    def __init__(self, algorithm: str, word: Callable[[K], str]) -> None:
        self.algorithm = algorithm
        self.stop = stop_words(algorithm)
        self.known: dict[K, str] = {}  # plain dicts: set(map(dict.get, ...)) stays in C
        self.older: dict[K, str] = {}
        self.word: Callable[[K], str] = word  # a token's folded word

    def of(self, found: list[K]) -> set[str]:
        """The distinct terms of a text's tokens, stop words left out."""
        known = self.known
        looked: set[Any] = set(map(known.get, found))  # terms, and None for a new token
        if None in looked:  # tokens not met lately (filterfalse is lazy: each learnt once)
            looked.discard(None)
            looked.update(map(self._learn, filterfalse(known.__contains__, found)))
        looked.discard(_STOP)
        return looked

    def _learn(self, token: K) -> str:
        """Remember a token not in the current generation; its term."""
        term = self.older.get(token)
        if term is None:
            word = self.word(token)
            if word in self.stop:
                term = _STOP
            else:
                term = _stemmers.of(self.algorithm).stemWord(word)
        known = self.known
        if len(known) >= CACHED_STEMS:
            # a new generation; a thread still reading the old dictionaries keeps them whole
            self.older, known = known, {}
            self.known = known
        known[token] = term
        return term


# An ASCII text's words are its runs of ASCII letters and digits (_WORD), and folding one
# only lowers it: this table does both at once, on bytes (any other byte becomes a space)
_ASCII_FOLD = bytes(
    code + 32 if 65 <= code <= 90 else code if 97 <= code <= 122 or 48 <= code <= 57 else 32
    for code in range(256)
)


class _TermCaches:
    """The _Terms caches of one language: for ASCII texts (tokens as bytes) and others."""

    __slots__ = ("ascii", "other")

    def __init__(self, language: str) -> None:
        algorithm = _algorithm(language)
        self.ascii = _Terms[bytes](algorithm, bytes.decode)
        self.other = _Terms[str](algorithm, str)


_term_caches: dict[str, _TermCaches] = {}


def terms(text: str, language: str = DEFAULT_LANGUAGE) -> set[str]:
    """The comparable words of a text (H1): its distinct folded tokens less the stop
    words, stemmed."""
    caches = _term_caches.get(language)
    if caches is None:
        caches = _term_caches.setdefault(language, _TermCaches(language))
    if text.isascii():
        return caches.ascii.of(text.encode("ascii").translate(_ASCII_FOLD).split())
    folded = fold(text)
    if folded.isascii():
        return caches.other.of(_WORD.findall(folded))
    return caches.other.of(cut_cjk(_MARKED_WORD.findall(folded)))


def find_word(text: str, wanted: Collection[str], language: str = DEFAULT_LANGUAGE) -> Span:
    """Where the first word of an unfolded text among the `wanted` terms starts and ends."""
    stemmed = _stemmer(language)
    for start, end in _word_spans(text):
        if stemmed(fold(text[start:end])) in wanted:
            return start, end
    return None


def word_spans(
    text: str, wanted: Collection[str], language: str = DEFAULT_LANGUAGE
) -> list[tuple[int, int]]:
    """Where every word of an unfolded text whose stem is among the `wanted` terms starts
    and ends (to highlight what a relevance search matched)."""
    stemmed = _stemmer(language)
    return [(a, b) for a, b in _word_spans(text) if stemmed(fold(text[a:b])) in wanted]


def language_named(text: str | None) -> str | None:
    """The Snowball language a text names ("Wants replies in French." -> "french"), the
    first one it names; None if it names none this search can stem."""
    if not text:
        return None
    for word in tokens(text):
        language = _NAMES.get(word)
        if language is not None:
            return language
    return None
