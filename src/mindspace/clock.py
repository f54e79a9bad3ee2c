"""The Clock port: every time-based rule reads a clock, never ``datetime.now()``."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ManualClock", "ResumedClock", "SystemClock", "format_time", "parse_time"]


@runtime_checkable
class Clock(Protocol):
    """A source of the current time (timezone-aware, UTC)."""

    def now(self) -> datetime:
        """The current time."""
        ...


class SystemClock:
    """The real wall clock."""

    def now(self) -> datetime:
        """The current UTC time."""
        return datetime.now(UTC)


class ManualClock:
    """A clock that moves only when told to; for tests and scripted demos.

    Args:
        start: The initial time; naive values are taken as UTC.
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._now = _aware(start) if start else datetime(2025, 12, 6, 10, 0, tzinfo=UTC)

    def now(self) -> datetime:
        """The current manual time."""
        return self._now

    def advance(
        self,
        delta: timedelta | None = None,
        *,
        seconds: float = 0,
        minutes: float = 0,
        hours: float = 0,
        days: float = 0,
    ) -> datetime:
        """Move forward by ``delta`` and/or the keyword amounts; returns the new time."""
        step = (delta or timedelta()) + timedelta(
            seconds=seconds, minutes=minutes, hours=hours, days=days
        )
        if step < timedelta():
            raise ValueError(f"ManualClock only moves forward; got a step of {step!r}")
        self._now += step
        return self._now

    def set(self, when: datetime) -> None:
        """Jump to ``when`` (forward or backward)."""
        self._now = _aware(when)


class ResumedClock:
    """A clock that starts at ``start`` and then runs at real speed.

    For serving a database written on a scripted clock (``mindspace demo --serve``): new
    ticks and events continue the story's timeline instead of jumping to today, so old and
    new dates never mix.

    Args:
        start: The time to continue from; naive values are taken as UTC.
    """

    def __init__(self, start: datetime) -> None:
        self._start = _aware(start)
        # monotonic, so a wall-clock adjustment never moves this clock backwards
        self._began = time.monotonic()

    def now(self) -> datetime:
        """``start`` plus the real time elapsed since this clock was made."""
        return self._start + timedelta(seconds=time.monotonic() - self._began)


def _aware(when: datetime) -> datetime:
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def format_time(when: datetime) -> str:
    """ISO-8601 in UTC to the second with a trailing ``Z``, as the spec writes timestamps.

    Whole seconds keep the strings sortable as text, which the store relies on.
    """
    return _aware(when).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """Parse a timestamp written by :func:`format_time` (or any ISO-8601 string)."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return _aware(value)
