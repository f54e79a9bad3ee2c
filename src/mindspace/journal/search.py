"""``search_journal``'s search: filters, then a semantic ranker or a text match.

Text mode is the spec's fallback: a case-insensitive substring match, newest first.
Semantic mode needs a :class:`SemanticRanker` (vector similarity over an embedder);
until one is wired in, a semantic request falls back to text and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, Protocol

from mindspace.clock import format_time
from mindspace.journal.records import JournalEntry
from mindspace.state.unit import Unit

__all__ = ["JournalFilter", "JournalSearch", "SemanticRanker", "filter_entries", "search_journal"]

SearchMode = Literal["text", "semantic"]


class SemanticRanker(Protocol):
    """Ranks entries by meaning (an embedder behind it); the journal's semantic mode."""

    async def rank(
        self, query: str, entries: Sequence[JournalEntry], limit: int
    ) -> list[tuple[JournalEntry, float]]:
        """The ``limit`` entries most similar to ``query``, best first, with similarities.

        Awaited on the event loop, so embedding must not block it (see ``embed_async``).
        """
        ...


@dataclass(frozen=True)
class JournalFilter:
    """Which entries a search or review looks at."""

    tags: tuple[str, ...] = ()
    any_tag: bool = False
    days_back: int | None = None
    project: str | None = None

    def since(self, now: datetime) -> str | None:
        """The oldest timestamp inside ``days_back``, as stored text."""
        if self.days_back is None:
            return None
        try:
            return format_time(now - timedelta(days=self.days_back))
        except OverflowError:  # further back than the calendar goes: no limit
            return None

    def accepts(self, entry: JournalEntry, since: str | None) -> bool:
        """Whether ``entry`` passes the filter (``since`` from :meth:`since`)."""
        if since is not None and entry.timestamp < since:
            return False
        if self.project is not None and self.project.casefold() not in {
            p.casefold() for p in entry.related_projects
        }:
            return False
        if not self.tags:
            return True
        if self.any_tag:
            own = {t.casefold() for t in entry.tags}
            return any(t.casefold() in own for t in self.tags)
        return entry.has_tags(self.tags)


def filter_entries(unit: Unit, now: datetime, where: JournalFilter) -> list[JournalEntry]:
    """Entries passing ``where``, newest first (by timestamp, then id)."""
    since = where.since(now)
    found = [e for e in unit.all(JournalEntry) if where.accepts(e, since)]
    found.sort(key=lambda e: (e.timestamp, e.id), reverse=True)
    return found


@dataclass(frozen=True)
class JournalSearch:
    """What a search found."""

    mode: SearchMode
    entries: list[JournalEntry]
    total_matches: int
    scores: list[float] | None = None
    note: str | None = None


async def search_journal(
    unit: Unit,
    now: datetime,
    query: str,
    where: JournalFilter,
    *,
    limit: int = 10,
    semantic: bool = True,
    ranker: SemanticRanker | None = None,
) -> JournalSearch:
    """Search the filtered entries; semantic when asked and a ranker exists, else text.

    An empty query matches every filtered entry (newest first).
    """
    candidates = filter_entries(unit, now, where)
    text = query.strip()
    if semantic and ranker is not None and text:
        ranked = await ranker.rank(text, candidates, limit)
        return JournalSearch(
            "semantic", [e for e, _ in ranked], len(ranked), scores=[s for _, s in ranked]
        )
    needle = text.casefold()
    matches = [e for e in candidates if needle in e.content.casefold()]
    note = None
    if semantic and text and ranker is None:
        note = "No embedder is configured, so the search used text matching"
    return JournalSearch("text", matches[:limit], len(matches), note=note)
