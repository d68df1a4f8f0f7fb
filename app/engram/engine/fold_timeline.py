"""Time travel without replaying the whole journal each time (issue 17 item 9).

A FoldTimeline folds a person's journal once and keeps the state it reached (the head)
plus a few states along the way (snapshots). The memory as of a moment is then the newest
snapshot before it, folded forward over the events after that snapshot and up to the
moment: the same steps `fold_as_of` takes from the start, so the same state (F5: any split
of the events into chunks folds to the same memory). Notes are immutable and shared, so a
snapshot costs one dict of references, not a copy of the notes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from engram.engine.fold import apply_event
from engram.model.events import Event
from engram.model.ids import PersonId
from engram.model.notes import PersonMemory

MIN_SPACING = 2_048  # events between snapshots, at least
MAX_SNAPSHOTS = 16  # beyond this the spacing doubles: memory stays bounded


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The memory after event `memory.seq`, which happened at `at` (None: no event yet)."""

    memory: PersonMemory
    at: datetime | None


class FoldTimeline:
    """A person's journal folded once, with snapshots for time travel."""

    def __init__(
        self, person: PersonId, *, spacing: int = MIN_SPACING, max_snapshots: int = MAX_SNAPSHOTS
    ) -> None:
        self.head = PersonMemory(person)
        self.head_at: datetime | None = None
        self.snapshots: list[Snapshot] = [Snapshot(PersonMemory(person), None)]
        self.spacing = spacing
        self.max_snapshots = max_snapshots
        # Time travel reads "the events at or before a moment" as a prefix of the journal;
        # that holds only while event times never go back. If one did, callers replay.
        self.in_time_order = True

    def extend(self, events: Iterable[Event]) -> None:
        """Fold events that follow the head (in journal order) onto it."""
        for event in events:
            if self.head_at is not None and event.at < self.head_at:
                self.in_time_order = False
            apply_event(self.head, event)
            self.head_at = event.at
            if self.head.seq - self.snapshots[-1].memory.seq >= self.spacing:
                self.snapshots.append(Snapshot(self.head.copy(), event.at))
                if len(self.snapshots) > self.max_snapshots:
                    self._thin()

    def detach_head(self) -> None:
        """Fold onto a copy from now on: a head handed out before stays as it was (a
        listing may still be reading it on another thread)."""
        self.head = self.head.copy()

    def _thin(self) -> None:
        """Keep every other snapshot (the empty start always), at twice the spacing."""
        self.spacing *= 2
        self.snapshots = [self.snapshots[0], *self.snapshots[2::2]]

    def covers(self, moment: datetime) -> bool:
        """Whether every event up to `moment` is folded in: the head is the memory then."""
        return self.head_at is None or self.head_at <= moment

    def start_for(self, moment: datetime) -> PersonMemory:
        """A copy of the newest snapshot taken at or before `moment`: folding the events
        after it up to `moment` onto it gives the memory as of `moment`."""
        start = self.snapshots[0]
        for snapshot in self.snapshots[1:]:
            if snapshot.at is not None and snapshot.at <= moment:
                start = snapshot
            else:
                break
        return start.memory.copy()


def fold_onward(memory: PersonMemory, events: Iterable[Event], moment: datetime) -> PersonMemory:
    """Fold the events after `memory` up to `moment` onto it (as fold_as_of does)."""
    for event in events:
        if event.at > moment:
            break
        apply_event(memory, event)
    return memory
