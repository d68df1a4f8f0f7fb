"""Rows read many times over, as plain named tuples.

A SQLAlchemy row's attribute (`row.seq`) costs close to a microsecond; a named tuple's
field, a few tens of nanoseconds. Where each row of a long stream is read a few dozen
times on its way — its chained header, its hash, the event it decodes into, its payload —
that was a fifth to a half of the work (verify, the journal's events).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterator
from typing import Any


def plain_rows(result: Any) -> Iterator[Any]:
    """A result's rows as named tuples with the same field names, streamed."""
    fields = namedtuple("StoredRow", list(result.keys()))  # type: ignore[misc]
    make = fields._make
    for row in result:
        yield make(row)
