"""The sensitive-topic detector (P5) — pure: the lexicon's data in, a category out.

The lexicon (engram/data/sensitive/categories.json, read by runtime.sensitive_lexicon) lists
per category and language: `words`, compared by Snowball stem in that language so their
inflections match ("diagnosed", "diagnostic", "Diagnosen"); `phrases`, word sequences
compared stem by stem ("blood pressure"); and `prefixes`, compared with the start of a
folded word, for compounds ("Blutdruck…", "Gewerkschafts…"). A text's language is not
known, so every language of the lexicon is tried: a word is sensitive in any of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engram.engine.words import fold, stem
from engram.model.sensitivity import SensitiveCategory

_MIN_PREFIX = 4  # shorter prefixes would catch ordinary words


def words_of(text: str) -> list[str]:
    """A text's folded words, stop words kept (phrases such as "in debt" need them)."""
    return [w for w in _split(fold(text)) if w]


def _split(folded: str) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    for char in folded:
        if char.isalnum():
            current.append(char)
        elif current:
            out.append("".join(current))
            current = []
    if current:
        out.append("".join(current))
    return out


@dataclass(frozen=True, slots=True)
class _Language:
    stems: Mapping[str, SensitiveCategory]
    phrases: tuple[tuple[tuple[str, ...], SensitiveCategory], ...]
    prefixes: tuple[tuple[str, SensitiveCategory], ...]


@dataclass(frozen=True, slots=True)
class Lexicon:
    """Each language's stems, phrases and prefixes, with the category each reveals."""

    languages: Mapping[str, _Language]
    patterns: tuple[tuple[re.Pattern[str], SensitiveCategory], ...] = ()

    @staticmethod
    def from_data(data: Mapping[str, Any]) -> Lexicon:
        """Build from the JSON's shape: {"categories": {id: {lang: {words, phrases,
        prefixes}, "patterns": [regex…]}}}; an unknown category id is an error (the ids
        are a contract)."""
        built: dict[str, tuple[dict[str, SensitiveCategory], list[Any], list[Any]]] = {}
        patterns: list[tuple[re.Pattern[str], SensitiveCategory]] = []
        for name, by_language in data["categories"].items():
            category = SensitiveCategory(name)
            for language, entry in by_language.items():
                if language == "patterns":  # language-free shapes (a card number)
                    patterns += [(re.compile(p), category) for p in entry]
                    continue
                stems, phrases, prefixes = built.setdefault(language, ({}, [], []))
                for word in entry.get("words", ()):
                    found = words_of(word)
                    if len(found) == 1:
                        stems.setdefault(stem(found[0], language), category)
                    elif found:  # "sans-papiers": its parts alone say nothing
                        phrases.append((tuple(stem(t, language) for t in found), category))
                for phrase in entry.get("phrases", ()):
                    key = tuple(stem(t, language) for t in words_of(phrase))
                    if key:
                        phrases.append((key, category))
                for prefix in entry.get("prefixes", ()):
                    folded = fold(prefix)
                    if len(folded) < _MIN_PREFIX:
                        raise ValueError(f"prefix {prefix!r} is shorter than {_MIN_PREFIX}")
                    prefixes.append((folded, category))
        return Lexicon(
            {
                language: _Language(stems, tuple(phrases), tuple(prefixes))
                for language, (stems, phrases, prefixes) in built.items()
            },
            tuple(patterns),
        )

    def category(self, text: str) -> SensitiveCategory | None:
        """The first sensitive category the text touches, in any language; None if none."""
        found = words_of(text)
        if not found:
            return None
        folded = fold(text)
        for pattern, category in self.patterns:
            if pattern.search(folded):
                return category
        for language, lexicon in self.languages.items():
            stems = [stem(w, language) for w in found]
            for stemmed in stems:
                hit = lexicon.stems.get(stemmed)
                if hit is not None:
                    return hit
            for key, category in lexicon.phrases:
                if _contains(stems, key):
                    return category
            for word in found:
                for prefix, category in lexicon.prefixes:
                    if word.startswith(prefix):
                        return category
        return None


def _contains(stems: Sequence[str], key: tuple[str, ...]) -> bool:
    n = len(key)
    return any(tuple(stems[i : i + n]) == key for i in range(len(stems) - n + 1))
