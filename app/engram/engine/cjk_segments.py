"""Han, Kana and Hangul cut into words (issue 18 item 15) — pure, no I/O.

These scripts write no spaces between words, so a run of them is no word. With no
word-break dictionary installed (PyICU is not a dependency), a run is cut into overlapping
character bigrams, as Lucene's CJK analyser does; a run of one character is that
character. A query's bigrams then meet the same bigrams in a text: "海淀区" is 海淀 + 淀区,
both found in "我住在北京海淀区".
"""

from __future__ import annotations

import re

# Hangul Jamo, Hiragana and Katakana, Hangul compatibility Jamo, Katakana extensions, CJK
# Extension A, CJK Unified Ideographs, Jamo extensions, Hangul syllables, compatibility
# ideographs, half-width Katakana, and the supplementary ideograph planes
_CJK = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
CJK_RUN = re.compile(f"[{_CJK}]+")


def segments(word: str) -> list[tuple[int, int]]:
    """Where a word's pieces are: its CJK runs as bigrams (a lone character stays one
    piece), its other runs whole."""
    pieces: list[tuple[int, int]] = []
    at = 0
    for run in CJK_RUN.finditer(word):
        start, end = run.span()
        if start > at:
            pieces.append((at, start))
        pieces.extend((i, i + 2) for i in range(start, end - 1))
        if end - start == 1:
            pieces.append((start, end))
        at = end
    if at < len(word):
        pieces.append((at, len(word)))
    return pieces


def cut_cjk(found: list[str]) -> list[str]:
    """Words with their CJK runs cut into bigrams; the others as they are."""
    cut: list[str] = []
    for word in found:
        if CJK_RUN.search(word):
            cut.extend(word[a:b] for a, b in segments(word))
        else:
            cut.append(word)
    return cut
