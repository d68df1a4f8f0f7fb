"""The verify report (issue 18 item 9): what `verify` checked and its verdict, made once
by the engine from the store's findings; `engram verify`, the inspector's audit tab and its
integrity badge only print it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from engram.control.wording import counted
from engram.store.verify_chains import VerifyFindings


class VerifyVerdict(StrEnum):
    """What verify found the store to be."""

    INTACT = "intact"
    # Every chain checks, but a copy without its checkpoint cannot be checked for rollback.
    INTACT_WITHOUT_CHECKPOINT = "intact without checkpoint"
    NOT_INTACT = "not intact"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The outcome of a verify run, with its verdict, sentence and advice."""

    ok: bool
    problems: tuple[str, ...]
    warnings: tuple[str, ...]
    chains: int
    entries: int
    cancelled: bool
    no_checkpoint_here: bool
    # Verified chain -> (length, head): what `engram checkpoint reanchor` anchors.
    heads: Mapping[str, tuple[int, bytes]] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, found: VerifyFindings) -> VerifyReport:
        """The report of what the store's walk found."""
        return cls(
            ok=found.ok,
            problems=tuple(found.problems),
            warnings=tuple(found.warnings),
            chains=found.chains,
            entries=found.entries,
            cancelled=found.cancelled,
            no_checkpoint_here=found.no_checkpoint_here,
            heads=dict(found.heads),
        )

    @property
    def verdict(self) -> VerifyVerdict:
        """A cancelled run vouches for nothing; any problem makes the store not intact."""
        if self.cancelled:
            return VerifyVerdict.CANCELLED
        if not self.ok:
            return VerifyVerdict.NOT_INTACT
        if self.no_checkpoint_here:
            return VerifyVerdict.INTACT_WITHOUT_CHECKPOINT
        return VerifyVerdict.INTACT

    def sentence(self) -> str:
        """The verdict as one plain sentence for people."""
        checked = f"{counted(self.chains, 'chain')}, {counted(self.entries, 'entry', 'entries')}"
        verdict = self.verdict
        if verdict is VerifyVerdict.CANCELLED:
            return "Verify was cancelled before it finished, so the store was not fully checked."
        if verdict is VerifyVerdict.NOT_INTACT:
            found = counted(len(self.problems), "problem")
            return f"Store NOT intact: {found} found in {checked} checked."
        if verdict is VerifyVerdict.INTACT_WITHOUT_CHECKPOINT:
            return f"Store intact: {checked} checked; this copy has no checkpoint here."
        return f"Store intact: {checked} checked."

    @property
    def advice(self) -> str:
        """What to do about the verdict, as one sentence ("" when there is nothing to do; a
        copy without its checkpoint is told how to re-anchor by its warning, in each face's
        words: `store.verify.no_checkpoint_sentence`)."""
        verdict = self.verdict
        if verdict is VerifyVerdict.CANCELLED:
            return "Run verify again to check the whole store."
        if verdict is VerifyVerdict.NOT_INTACT:
            return (
                "Each problem names the first bad entry of its chain; do not rely on this copy "
                "until it is restored from a backup that verifies."
            )
        return ""

    def to_json(self) -> dict[str, Any]:
        """As printed by `engram verify --json` (the contract's `ok` and `problems`, and more)."""
        return {
            "ok": self.ok,
            "problems": list(self.problems),
            "warnings": list(self.warnings),
            "chains": self.chains,
            "entries": self.entries,
            "cancelled": self.cancelled,
            "no_checkpoint_here": self.no_checkpoint_here,
            "verdict": self.verdict.value,
            "sentence": self.sentence(),
            "advice": self.advice,
        }
