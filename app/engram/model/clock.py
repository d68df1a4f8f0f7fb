"""An injectable clock: every time in a journal comes from one of these."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """Gives the current time as an aware UTC datetime."""

    def now(self) -> datetime: ...


class SystemClock:
    """The real clock, truncated to microseconds (what the store keeps)."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that moves only when told to (tests, demos, benchmarks)."""

    def __init__(self, start: datetime, step: timedelta = timedelta(0)) -> None:
        if start.tzinfo is None:
            raise ValueError("ManualClock needs an aware datetime")
        self._now = start
        self._step = step

    def now(self) -> datetime:
        current = self._now
        self._now = self._now + self._step
        return current

    def advance(self, delta: timedelta) -> None:
        """Move the clock forward."""
        self._now = self._now + delta

    def set(self, moment: datetime) -> None:
        """Jump to a moment."""
        self._now = moment


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def to_micros(moment: datetime) -> int:
    """Microseconds since the Unix epoch (how times are stored and chained); exact."""
    return (moment - _EPOCH) // _MICROSECOND


def from_micros(micros: int) -> datetime:
    """Inverse of to_micros."""
    return _EPOCH + timedelta(microseconds=micros)


def parse_time(text: str) -> datetime:
    """Parse an ISO-8601 time; a time without a zone is taken as UTC."""
    from engram.model.errors import InvalidInput

    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"{text!r} is not an ISO-8601 time; write e.g. 2026-11-29T14:00:00Z."
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def iso(moment: datetime | None) -> str | None:
    """Render a time as ISO-8601 UTC with a Z, or None."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
