"""A journal's time: what its next event is dated, and what `maintain` decides by.

Events are dated in order: time travel replays a prefix of a journal (F5), and a note's
interval must never end before it starts. The computer's clock does not always agree: if
it once ran ahead (a bad battery clock, a wrong time zone fixed later) a journal holds an
entry dated in its future, and the clock is now *behind* that journal.

Dating every later event at that newest entry (max(clock, newest)) would keep order but
freeze the journal's time: a person's later events would all share one future moment, and
a transient note (M3: four hours) would wait for the real clock to catch up — two years,
say. Instead, while the clock is behind, the journal keeps its own timeline: it runs on at
the clock's pace from its newest entry. Each event dated off the clock records the
clock's reading beside its time (`clock_at`, inside its chained body), so the next one —
in this process or any later one — knows how much time has passed since. Four hours are
still four hours, order holds, and every write that meets such a clock, and verify, say
so (`ClockBehind`).

A clock behind by no more than TOLERANCE (an NTP step, two processes a few milliseconds
apart) is only kept in order: the journal waits for it rather than keep an offset.

`journal_stamp` is the one notion of time for a journal: `maintain` decides expiry by
it, and `--as-of` reads the same dates. Conversation logs only keep order (their times
decide nothing that expires) and warn the same way.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from sqlalchemy import Connection, func, select

from engram.model.clock import from_micros, iso
from engram.store import schema

CLOCK_KEY = "clock_at"  # in a journal event's body: the clock's reading, when `at` differs
TOLERANCE_MICROS = 60 * 1_000_000
log = logging.getLogger(__name__)
J = schema.journal


@dataclass(frozen=True, slots=True)
class Stamp:
    """The time an event gets, and the clock reading to record beside it (None when the
    event is dated by the clock itself)."""

    at: int
    clock_at: int | None


@dataclass(frozen=True, slots=True)
class ClockBehind:
    """The computer's clock is behind a journal's newest entry."""

    chain: str
    newest: int
    clock: int

    def sentence(self) -> str:
        """One line for a person (a warning: the write went ahead)."""
        return (
            f"this computer's clock ({iso(from_micros(self.clock))}) is "
            f"{_span(self.newest - self.clock)} behind the newest entry of {_named(self.chain)} "
            f"({iso(from_micros(self.newest))}): "
            "if the clock is right, it once ran ahead — changes are dated on that journal's "
            "own timeline, after its newest entry, so its order and durations hold (and "
            "time travel reads those dates); check the clock"
        )


def _named(chain: str) -> str:
    kind, _, name = chain.partition(":")
    if kind == "journal":
        return f"{name}'s journal"
    return f"the log of conversation {name}" if kind == "log" else chain


def newest(conn: Connection, person: str) -> int | None:
    """When the person's journal's newest entry is dated (None without one)."""
    value = conn.execute(select(func.max(J.c.at)).where(J.c.person == person)).scalar()
    return None if value is None else int(value)


def _span(micros: int) -> str:
    seconds = micros // 1_000_000
    for unit, size in (("days", 86_400), ("hours", 3_600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds // size} {unit}"
    return f"{seconds} seconds"


def stamp(clock: int, newest_at: int, newest_clock: int | None) -> Stamp:
    """When an event appended now is dated: the clock, unless that is before the journal's
    newest entry (dated `newest_at`, when the clock read `newest_clock`, None if it was
    dated by the clock itself)."""
    if clock >= newest_at:
        return Stamp(clock, None)
    if newest_at - clock <= TOLERANCE_MICROS and newest_clock is None:
        return Stamp(newest_at, None)  # a small step back: wait for the clock, no offset
    since = clock - (newest_clock if newest_clock is not None else newest_at)
    return Stamp(newest_at + max(0, since), clock)


def newest_clock(conn: Connection, person: str, seq: int) -> int | None:
    """The clock reading recorded beside a journal event's time (None when it had none)."""
    body = conn.execute(select(J.c.body).where(J.c.person == person, J.c.seq == seq)).scalar()
    if body is None:
        return None
    value = json.loads(body).get(CLOCK_KEY)
    return int(value) if isinstance(value, int) else None


def journal_stamp(conn: Connection, person: str, clock: int) -> Stamp:
    """The stamp the person's journal would give an event now."""
    row = conn.execute(
        select(J.c.seq, J.c.at).where(J.c.person == person).order_by(J.c.seq.desc()).limit(1)
    ).first()
    if row is None:
        return Stamp(clock, None)
    return stamp_after(conn, person, int(row.seq), int(row.at), clock)


def stamp_after(conn: Connection, person: str, seq: int, at: int, clock: int) -> Stamp:
    """`stamp` after the journal event `seq` dated `at` (its clock reading read only when
    the clock is behind it, which is rare)."""
    if clock >= at:
        return Stamp(clock, None)
    return stamp(clock, at, newest_clock(conn, person, seq))


def behind(chain: str, newest_at: int, clock: int) -> ClockBehind | None:
    """A warning when the clock is behind a chain's newest entry by more than TOLERANCE."""
    if newest_at - clock <= TOLERANCE_MICROS:
        return None
    return ClockBehind(chain, newest_at, clock)


def journals_ahead(conn: Connection, clock: int) -> list[ClockBehind]:
    """Every journal whose newest entry is after the clock (beyond TOLERANCE), for verify."""
    rows = conn.execute(
        select(J.c.person, func.max(J.c.at)).group_by(J.c.person).order_by(J.c.person)
    ).all()
    return [
        found
        for person, newest in rows
        if (found := behind(f"journal:{person}", int(newest), clock)) is not None
    ]
