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
from typing import Generic, TypeVar

from engram.model.notes import Note, NoteFilter

FacetKey = tuple[str, str, str]  # status, scope, kind values
T = TypeVar("T")


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

    kept = values(f.statuses), values(f.scopes), values(f.kinds)
    return (*kept, f.order, f.descending, f.created_after_seq)


def keeps(f: NoteFilter) -> Callable[[Note], bool]:
    """Whether a note passes the filter's status, scope and kind (any order)."""
    statuses, scopes, kinds, after = f.statuses, f.scopes, f.kinds, f.created_after_seq
    return lambda n: (
        (statuses is None or n.status in statuses)
        and (scopes is None or n.scope in scopes)
        and (kinds is None or n.kind in kinds)
        and (after is None or n.created_seq > after)
    )


def counted(counts: Counter[FacetKey], f: NoteFilter) -> int:
    """How many notes pass the filter's status, scope and kind, from the counts alone (a
    filter by creation is counted by its caller)."""
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

    def __len__(self) -> int:
        return len(self._texts)

    def first_rows(self, needle: str, start: int, want: int) -> tuple[list[int], int]:
        """At least `want` rows from `start` on whose text contains `needle` (fewer at the
        end), and the row to go on from: a first page without reading every text."""
        texts, starts = self._texts, self._starts
        rows: list[int] = []
        if not needle or self.SEPARATOR in needle or start >= len(texts):
            at = len(texts)
            return [i for i, text in enumerate(texts[start:], start) if needle in text], at
        find, at = self._joined.find, start
        while len(rows) < want:
            hit = find(needle, starts[at])
            if hit < 0:
                return rows, len(texts)
            row = bisect_right(starts, hit) - 1
            rows.append(row)
            at = row + 1
            if at >= len(texts):
                break
        return rows, at

    def rows_containing(self, needle: str, start: int = 0) -> list[int]:
        """The rows from `start` on whose text contains `needle` (case-folded), in order."""
        texts = self._texts
        if not needle or self.SEPARATOR in needle or start >= len(texts):  # stay exact
            return [i for i, text in enumerate(texts[start:], start) if needle in text]
        starts, find = self._starts, self._joined.find
        rows: list[int] = []
        at = find(needle, starts[start])
        while at >= 0:
            row = bisect_right(starts, at) - 1
            rows.append(row)
            if len(rows) >= 64 and len(rows) * self.MANY > row - start:  # dense so far
                rest = enumerate(texts[row + 1 :], row + 1)
                return rows + [i for i, text in rest if needle in text]
            if row + 1 >= len(starts):
                break
            at = find(needle, starts[row + 1])
        return rows


class TextMatches(Generic[T]):
    """The items whose text (in `column`, row for row) contains a needle, found only as
    far as pages ask: a first page costs what it costs on a small person. The total is
    known once `finish` has scanned the rest (a background task does, after the page is
    shown). Safe to read from several worker threads."""

    def __init__(self, items: Sequence[T], column: TextColumn, needle: str) -> None:
        self._items, self._column, self._needle = items, column, needle
        self._rows: list[int] = []
        self._next = 0
        self._lock = threading.Lock()

    @property
    def complete(self) -> bool:
        """Whether every row has been looked at (the count is then the total)."""
        return self._next >= len(self._column)

    def found(self) -> int:
        """How many matches are known so far (the total once complete)."""
        return len(self._rows)

    def page(self, offset: int, limit: int) -> list[T]:
        """The matches from `offset`, at most `limit`."""
        with self._lock:
            want = offset + limit - len(self._rows)
            if want > 0 and not self.complete:
                rows, self._next = self._column.first_rows(self._needle, self._next, want)
                self._rows += rows
            return [self._items[i] for i in self._rows[offset : offset + limit]]

    def finish(self) -> int:
        """Look at every remaining row; the total."""
        with self._lock:
            if not self.complete:
                self._rows += self._column.rows_containing(self._needle, self._next)
                self._next = len(self._column)
            return len(self._rows)
