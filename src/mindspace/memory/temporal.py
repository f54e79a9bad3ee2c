"""Dates named in a question, as time windows memories can be matched against.

"What did Nate do on 25 May, 2022?", "Which spot did Joanna visit in May?", "What
setback did Melanie face in October 2023?": the question names when, and the memory
that answers it was told on that date or soon after ("last night", "last week"), so its
``occurred_at`` falls in a window starting at the named date. Only explicit calendar
dates are read (English month names, day numbers, four-digit years); relative phrases
("last week") are left to the text search.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = ["TimeWindow", "asks_when", "named_windows", "says_when"]

_MONTHS = {name.casefold(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.casefold(): n for n, name in enumerate(calendar.month_abbr) if name}
_MONTHS.pop("may", None)
_MONTHS["may"] = 5
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PATTERNS = (
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\bin\s+{_MONTH}(?!\w)", re.IGNORECASE),
    re.compile(rf"\b(?:in|during|of)\s+{_YEAR}\b", re.IGNORECASE),
)

TOLD_WITHIN = timedelta(days=14)
"""How long after a named date a memory of it is still looked for (told "last week")."""


@dataclass(frozen=True)
class TimeWindow:
    """A span of time, as POSIX seconds; ``yearless`` spans repeat every year.

    Attributes:
        start: The first second of the span.
        end: The second after it ends (the named date plus :data:`TOLD_WITHIN`).
        yearless: The question named a month without a year ("in May"): any year's.
    """

    start: float
    end: float
    yearless: bool = False

    def contains(self, when: datetime) -> bool:
        """Whether ``when`` (an aware datetime) falls in the window."""
        if not self.yearless:
            return self.start <= when.timestamp() < self.end
        begin = datetime.fromtimestamp(self.start, UTC)
        for year in (when.year - 1, when.year):
            shift = year - begin.year
            low = begin.replace(year=begin.year + shift).timestamp()
            if low <= when.timestamp() < low + (self.end - self.start):
                return True
        return False


def _span(year: int, month: int | None, day: int | None) -> tuple[datetime, datetime] | None:
    try:
        if month is None:
            return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
        if day is None:
            last = calendar.monthrange(year, month)[1]
            start = datetime(year, month, 1, tzinfo=UTC)
            return start, start + timedelta(days=last)
        start = datetime(year, month, day, tzinfo=UTC)
        return start, start + timedelta(days=1)
    except ValueError:  # "31 February": not a date, so no window
        return None


def named_windows(text: str) -> list[TimeWindow]:
    """The time windows of the calendar dates ``text`` names, in order of appearance.

    Args:
        text: A question or search query.

    Returns:
        One window per date named; empty when none is. A window starts at the date and
        ends :data:`TOLD_WITHIN` after it, since memories are told after the fact.

    Example:
        >>> [w.yearless for w in named_windows("What did she do in May?")]
        [True]
    """
    found: list[tuple[int, TimeWindow]] = []
    taken: list[tuple[int, int]] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            if any(s < match.end() and match.start() < e for s, e in taken):
                continue  # part of a fuller date already read ("May 3, 2023", not "May")
            parts = match.groupdict()
            month = _MONTHS[parts["month"].casefold()] if parts.get("month") else None
            day = int(parts["day"]) if parts.get("day") else None
            yearless = parts.get("year") is None
            span = _span(2000 if yearless else int(parts["year"]), month, day)
            if span is None:
                continue
            taken.append((match.start(), match.end()))
            start, end = span
            found.append(
                (
                    match.start(),
                    TimeWindow(start.timestamp(), (end + TOLD_WITHIN).timestamp(), yearless),
                )
            )
    return [window for _, window in sorted(found, key=lambda item: item[0])]


_ASKS_WHEN = re.compile(
    r"^\W*(?:when|how long|since when|what (?:year|month|day|date|time|week))\b", re.IGNORECASE
)
_SAYS_WHEN = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|recently|ago|since"
    r"|(?:last|next|this) (?:night|week|weekend|month|year|summer|winter|spring|fall|autumn"
    r"|morning|evening|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|(?:19|20)\d\d|" + "|".join(name.casefold() for name in calendar.month_name if name) + r")\b",
    re.IGNORECASE,
)


def asks_when(text: str) -> bool:
    """The question asks for a time ("When did...", "How long ago...", "What year...")."""
    return _ASKS_WHEN.search(text) is not None


def says_when(text: str) -> bool:
    """The text places something in time ("last week", "yesterday", "in 2019", "in May")."""
    return _SAYS_WHEN.search(text) is not None
