"""Marking what a search matched, in results and in the transcript. Relevance matches
words by their stems (H1), so the words marked are those whose stems the query shares;
a pattern (H2) marks its literal text and what RE2 matches (linear time)."""

from __future__ import annotations

import html
from collections.abc import Callable

from engram.engine.pattern import PatternQuery, compile_query
from engram.engine.words import DEFAULT_LANGUAGE, terms, word_spans
from engram.model.errors import InvalidInput

Spans = list[tuple[int, int]]
MARK_STYLE = "background: rgba(255, 200, 0, 0.55); font-weight: bold"


def matcher(query: str, mode: str, language: str = DEFAULT_LANGUAGE) -> Callable[[str], Spans]:
    """A function giving the spans of a text that the search `query` (in `mode`) matched."""
    query = query.strip()
    if not query:
        return lambda _text: []
    if mode == "pattern":
        try:
            compiled = compile_query(query)
        except InvalidInput:
            return lambda _text: []
        return lambda text: _pattern_spans(compiled, text)
    wanted = terms(query, language)
    return lambda text: word_spans(text, wanted, language)


def _pattern_spans(compiled: PatternQuery, text: str) -> Spans:
    """Every place the pattern query matches: its literal text, and RE2's matches (linear
    in the text, so a transcript cannot hang on a hostile pattern)."""
    spans: Spans = []
    literal = compiled.literal
    at = text.find(literal) if literal else -1
    while at >= 0:
        spans.append((at, at + len(literal)))
        at = text.find(literal, at + len(literal))
    if compiled.regex is not None:
        for found in compiled.regex.finditer(text):
            start, end = (int(v) for v in found.span())
            if end > start:
                spans.append((start, end))
    return spans


def marked_html(text: str, spans: Spans) -> str:
    """The text, escaped for HTML, with each span marked."""
    parts: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if start < at:
            continue
        parts.append(html.escape(text[at:start]))
        parts.append(f"<span style='{MARK_STYLE}'>{html.escape(text[start:end])}</span>")
        at = end
    parts.append(html.escape(text[at:]))
    return "".join(parts)
