"""Okapi BM25 over the words of `engine.words` — pure, no I/O (issue 18 item 14).

The searches no seed rule binds (the inspector's search across a person's conversations,
memory_search over notes) rank by BM25; conversation_find keeps H1's count of words.

Each document's words are a set (the index keeps which messages hold a term, not how
often), so a term's frequency in a document is 1: the score of a document is
  norm(length) x the sum over the query terms it holds of idf(term), with
  idf = ln(1 + (N - df + 0.5) / (df + 0.5))   (Lucene's, never negative), and
  norm = (k1 + 1) / (1 + k1 (1 - b + b length / average length)),
where a document's length is its number of distinct words. A rare term weighs more than
a common one; of two documents holding the same terms, the shorter ranks first.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Collection, Iterable, Sequence

# Anserini's (and Pyserini's) defaults for BM25, k1 = 0.9 and b = 0.4: taken as published,
# not tuned here. On LoCoMo (tests/perf/eval_locomo.py) the textbook 1.2 / 0.75 ranked
# 1 pp below a fair FTS5 BM25 at recall@5; these rank above it (README, benchmarks).
K1 = 0.9
B = 0.4


def idf(holders: int, documents: int) -> float:
    """A term's weight: rarer is heavier, and it stays positive however common it is."""
    return math.log(1.0 + (documents - holders + 0.5) / (holders + 0.5))


def length_norm(length: int, average: float) -> float:
    """BM25's saturation and length factor for a term held once in a document."""
    ratio = length / average if average > 0 else 1.0
    return (K1 + 1.0) / (1.0 + K1 * (1.0 - B + B * ratio))


def scores(
    postings: Iterable[tuple[float, Sequence[int]]],
    length: Callable[[int], int],
    average: float,
) -> dict[int, float]:
    """Each document's BM25 score from (idf, documents holding the term) per query term."""
    # the longest postings first, taken whole by dict.fromkeys (in C); the shorter ones are
    # added one by one: a person-wide search meets tens of thousands of candidates
    ordered = sorted(postings, key=lambda posting: -len(posting[1]))
    if not ordered:
        return {}
    weight, holders = ordered[0]
    summed: dict[int, float] = dict.fromkeys(holders, weight)
    get = summed.get
    for weight, holders in ordered[1:]:
        for document in holders:
            summed[document] = get(document, 0.0) + weight
    norms: dict[int, float] = {}  # by length: lengths repeat, few distinct ones
    scored: dict[int, float] = {}
    for document, total in summed.items():
        size = length(document)
        norm = norms.get(size)
        if norm is None:
            norm = norms[size] = length_norm(size, average)
        scored[document] = total * norm
    return scored


def best(scored: dict[int, float], count: int) -> list[int]:
    """The `count` best documents, ties to the higher key (the newer message)."""
    return [d for _, d in heapq.nlargest(count, zip(scored.values(), scored.keys(), strict=True))]


def rank_sets(query: Collection[str], documents: list[frozenset[str]]) -> list[tuple[int, float]]:
    """BM25 over a small list of word sets (memory_search's pool): (index, score) of every
    document holding a query term, best first, ties to the earlier document."""
    if not documents or not query:
        return []
    holding: dict[str, list[int]] = {t: [] for t in query}
    for i, words in enumerate(documents):
        for term in words & holding.keys():
            holding[term].append(i)
    total = len(documents)
    average = sum(len(w) for w in documents) / total
    scored = scores(
        ((idf(len(h), total), h) for h in holding.values() if h),
        lambda i: len(documents[i]),
        average,
    )
    return sorted(scored.items(), key=lambda pair: (-pair[1], pair[0]))
