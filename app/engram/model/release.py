"""Letting go of big collections a piece at a time (issue 17 item 8).

Freeing a list of 100,000 rows, or a dict of 100,000 notes, is one cascade of
deallocations in C when the last reference goes (a function returns, a `del`): it keeps
the interpreter for a quarter to half a second, and every other thread — the inspector's
UI thread among them — waits that long. Emptied here a piece at a time, with the
interpreter's own loop between pieces, other threads get in after each piece.
"""

from __future__ import annotations

from typing import Any

PIECE = 2_000  # items freed between chances for other threads (well under a millisecond)


def let_go(*collections: list[Any] | dict[Any, Any] | set[Any]) -> None:
    """Empty each collection in pieces (their items are freed as they go, if nothing else
    holds them)."""
    for collection in collections:
        if isinstance(collection, list):
            while collection:
                del collection[-PIECE:]
        elif isinstance(collection, dict):
            while collection:
                for _ in range(min(PIECE, len(collection))):
                    collection.popitem()
        else:
            while collection:
                for _ in range(min(PIECE, len(collection))):
                    collection.pop()
