"""Which journal entries go: overflow past ``max_entries``, and old unimportant ones.

Both rules are pure functions of the entries, so they can be tested (and property
tested) without a store. ``docs/journal.md`` states them for users.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from mindspace.clock import parse_time
from mindspace.journal.records import JournalEntry

__all__ = [
    "LOW_IMPORTANCE_MAX",
    "LOW_IMPORTANCE_MAX_AGE_DAYS",
    "LOW_IMPORTANCE_PER_CALL",
    "select_low_importance",
    "select_overflow",
]

LOW_IMPORTANCE_MAX = 3
LOW_IMPORTANCE_MAX_AGE_DAYS = 30
LOW_IMPORTANCE_PER_CALL = 10


def _age_order(entry: JournalEntry) -> tuple[str, int]:
    return (entry.timestamp, entry.id)


def select_overflow(
    entries: Sequence[JournalEntry], max_entries: int, keep_id: int | None = None
) -> list[JournalEntry]:
    """The entries to drop so that at most ``max_entries`` remain, oldest first.

    The rule: ordinary entries go first - those already consolidated into semantic
    memory before those not yet consolidated (whose only copy is here), oldest first
    within each. ``[SYNTHESIS]`` entries are kept while they alone fit in
    ``max_entries``; only when they outnumber it do the oldest of them go too. The entry
    ``keep_id`` (the one just added) is never dropped.
    """
    excess = len(entries) - max_entries
    if excess <= 0:
        return []
    candidates = [e for e in entries if e.id != keep_id]
    ordinary = sorted(
        (e for e in candidates if not e.is_synthesis),
        key=lambda e: (not e.consolidated, *_age_order(e)),
    )
    synthesis = sorted((e for e in candidates if e.is_synthesis), key=_age_order)
    return (ordinary + synthesis)[:excess]


def select_low_importance(
    entries: Sequence[JournalEntry],
    now: datetime,
    *,
    max_importance: int = LOW_IMPORTANCE_MAX,
    older_than_days: float = LOW_IMPORTANCE_MAX_AGE_DAYS,
    limit: int = LOW_IMPORTANCE_PER_CALL,
) -> list[JournalEntry]:
    """Entries with importance <= ``max_importance`` older than ``older_than_days``, oldest first.

    "Older than" is strict: an entry exactly 30 days old stays. At most ``limit`` entries.
    """
    cutoff = now - timedelta(days=older_than_days)
    old = [
        e for e in entries if e.importance <= max_importance and parse_time(e.timestamp) < cutoff
    ]
    return sorted(old, key=_age_order)[: max(0, limit)]
