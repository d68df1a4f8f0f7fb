"""The access report as a typed value: sections of blocks, no Qt, no markup.

A block is the unit a page never splits (a note with its disclosures and history, one turn
of a transcript, one row of the audit log): whoever renders the report lays out block by
block, so a row is never cut across two pages. The GUI prints it to PDF (gui/access_report);
anything else could render the same value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# How a block reads: a note, a turn, a part removed from a transcript, a small-print row…
Tone = Literal["plain", "note", "turn", "removed", "row", "small", "good", "bad"]


@dataclass(frozen=True, slots=True)
class Block:
    """One unsplittable unit: a heading, labelled facts, then lines of text."""

    heading: str = ""
    facts: tuple[tuple[str, str], ...] = ()
    lines: tuple[str, ...] = ()
    tone: Tone = "plain"


@dataclass(frozen=True, slots=True)
class Section:
    """A titled run of blocks; `new_page` starts it on a fresh page."""

    title: str
    blocks: tuple[Block, ...]
    intro: tuple[str, ...] = ()
    new_page: bool = True
    key: str = ""  # what the section is, for tests and renderers ("summary", "notes", …)


@dataclass
class Counts:
    """The summary page's figures, kept as numbers too (tests and the CLI read them)."""

    by_kind: dict[str, int] = field(default_factory=dict)
    by_scope: dict[str, int] = field(default_factory=dict)
    holding: int = 0
    closed: int = 0
    conversations: int = 0
    disclosures: int = 0
    removed_parts: int = 0
    deleted_notes: int = 0
    deleted_conversations: int = 0


@dataclass
class ReportDocument:
    """Everything kept about one person, as the pages they are handed."""

    person: str
    title: str
    sections: list[Section]
    counts: Counts
    store_id: str
    made_at: str  # local time with its zone

    def section(self, key: str) -> Section:
        """The section of that key (KeyError when the report has none)."""
        for section in self.sections:
            if section.key == key:
                return section
        raise KeyError(key)

    def block_count(self) -> int:
        """How many blocks the renderer lays out (its progress total)."""
        return sum(len(s.blocks) + 1 for s in self.sections)

    def plain_text(self) -> str:
        """The whole report as plain text, in reading order (tests; a text rendering)."""
        out: list[str] = [self.title]
        for section in self.sections:
            out += ["", section.title, *section.intro]
            for block in section.blocks:
                out += [block.heading] if block.heading else []
                out += [f"{label}: {value}" for label, value in block.facts]
                out += list(block.lines)
        return "\n".join(out)
