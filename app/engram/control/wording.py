"""Counts in words, shared by every face's sentence builders: "1 conversation", never
"1 conversations" (nor "conversation(s)")."""

from __future__ import annotations


def counted(count: int, one: str, many: str | None = None) -> str:
    """`count` followed by the noun that fits it: `one` for 1, else `many` (by default
    `one` + "s"; give it for "entry"/"entries", "person"/"people")."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def verb(count: int, one: str, many: str) -> str:
    """The verb that agrees with `count` things ("is"/"are", "holds"/"hold")."""
    return one if count == 1 else many
