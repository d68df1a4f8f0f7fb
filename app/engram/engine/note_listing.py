"""Filtering a person's notes the way the inspector's table lists them, page by page.

A listing knows its total from counts kept per (status, scope, kind) and finds its rows
only as far as the pages asked for: the first page of a 100k-note person costs what the
first page of a 1k one does (issue 17 item 9). Pure: no I/O, no text.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence

from engram.model.notes import Note, NoteFilter

FacetKey = tuple[str, str, str]  # status, scope, kind values


def facet(note: Note) -> FacetKey:
    """The three fields a filter looks at."""
    return note.status.value, note.scope.value, note.kind.value


def facet_counts(notes: Sequence[Note]) -> Counter[FacetKey]:
    """How many notes there are of each status, scope and kind together."""
    return Counter(facet(note) for note in notes)


def filter_key(f: NoteFilter) -> tuple[object, ...]:
    """A hashable form of a filter (its collections become sorted tuples)."""

    def values(chosen: object) -> tuple[str, ...] | None:
        if chosen is None:
            return None
        return tuple(sorted(getattr(c, "value", str(c)) for c in chosen))  # type: ignore[attr-defined]

    return values(f.statuses), values(f.scopes), values(f.kinds), f.order, f.descending


def keeps(f: NoteFilter) -> Callable[[Note], bool]:
    """Whether a note passes the filter's status, scope and kind (any order)."""
    statuses, scopes, kinds = f.statuses, f.scopes, f.kinds
    return lambda n: (
        (statuses is None or n.status in statuses)
        and (scopes is None or n.scope in scopes)
        and (kinds is None or n.kind in kinds)
    )


def counted(counts: Counter[FacetKey], f: NoteFilter) -> int:
    """How many notes pass the filter, from the counts alone."""
    statuses = None if f.statuses is None else {s.value for s in f.statuses}
    scopes = None if f.scopes is None else {s.value for s in f.scopes}
    kinds = None if f.kinds is None else {k.value for k in f.kinds}
    return sum(
        n
        for (status, scope, kind), n in counts.items()
        if (statuses is None or status in statuses)
        and (scopes is None or scope in scopes)
        and (kinds is None or kind in kinds)
    )


class LazyMatches:
    """The items of `ordered` that `keep`, found only as far as a page asks: a total known
    up front (`total`, from counts) and pages read from a scan that resumes where it
    stopped. Safe to read from several worker threads."""

    def __init__(self, ordered: Sequence[Note], keep: Callable[[Note], bool], total: int) -> None:
        self._ordered = ordered
        self._keep = keep
        self.total = total
        self._found: list[Note] = []
        self._scanned = 0
        self._lock = threading.Lock()

    def page(self, offset: int, limit: int) -> list[Note]:
        """The matches from `offset`, at most `limit`."""
        end = offset + limit
        with self._lock:
            found, ordered, keep = self._found, self._ordered, self._keep
            while len(found) < end and self._scanned < len(ordered):
                stop = min(len(ordered), self._scanned + max(limit * 4, 256))
                found += [n for n in ordered[self._scanned : stop] if keep(n)]
                self._scanned = stop
            return found[offset:end]


class TextColumn:
    """Case-folded texts, one per row, also joined into one string: a needle few rows hold
    is found by str.find jumping from match to match (in C); once matches turn out to be
    many, the remaining rows are tested one by one, which then costs less per match."""

    SEPARATOR = "\x00"
    MANY = 16  # more than one row in MANY matching so far: test the rest row by row

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = texts
        self._joined = self.SEPARATOR.join(texts)
        starts, at = [], 0
        for text in texts:
            starts.append(at)
            at += len(text) + 1
        self._starts = starts

    def rows_containing(self, needle: str) -> list[int]:
        """The rows whose text contains `needle` (already case-folded), in order."""
        texts = self._texts
        if not needle or self.SEPARATOR in needle:  # never met in typing; stay exact
            return [i for i, text in enumerate(texts) if needle in text]
        starts, find = self._starts, self._joined.find
        rows: list[int] = []
        at = find(needle)
        while at >= 0:
            row = bisect_right(starts, at) - 1
            rows.append(row)
            if len(rows) >= 64 and len(rows) * self.MANY > row:  # dense so far
                rest = enumerate(texts[row + 1 :], row + 1)
                return rows + [i for i, text in rest if needle in text]
            if row + 1 >= len(starts):
                break
            at = find(needle, starts[row + 1])
        return rows
