"""``search_journal``'s search: filters, then a semantic ranker or a text match.

Text mode is the spec's fallback: a case-insensitive substring match, newest first.
Semantic mode (an embedder is configured) ranks the filtered entries by cosine
similarity to the query: entries with a stored vector through the
:class:`~mindspace.state.semantic.JournalIndex` port (the semantic store's), the few
not embedded yet at query time; entries below the calibrated cut-off
(``journal_min_similarity``) are no match. With an index the filter runs inside it
(:meth:`~mindspace.state.semantic.JournalIndex.search`), so a semantic search does no
Python work per entry; only the text mode and the index-less fallback list the
entries. Without an embedder a semantic request falls back to text and says so.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from operator import attrgetter
from typing import Literal

from mindspace.clock import format_time
from mindspace.embeddings.port import Embedder, embed_async
from mindspace.journal.ranker import EmbeddingRanker
from mindspace.journal.records import JournalEntry
from mindspace.state.semantic import EntryFilter, JournalIndex, Neighbour, Ranked, rank_candidates
from mindspace.state.unit import Unit

__all__ = [
    "JournalFilter",
    "JournalSearch",
    "SemanticJournal",
    "filter_entries",
    "search_journal",
]

SearchMode = Literal["text", "semantic"]


@dataclass(frozen=True)
class SemanticJournal:
    """What semantic mode needs: the embedder, the stored vectors' index and the cut-off.

    Attributes:
        embedder: Embeds the query (and entries with no stored vector yet).
        index: Ranks entries by their stored vectors (None: every entry is embedded at
            query time, through the process-wide cache of :class:`EmbeddingRanker`).
        min_similarity: Entries less similar than this to the query are no match.
    """

    embedder: Embedder
    index: JournalIndex | None
    min_similarity: float


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

    def for_index(self, now: datetime, exclude: Collection[str] = ()) -> EntryFilter:
        """This filter as the journal index port takes it (names casefolded).

        Args:
            now: The time ``days_back`` counts from.
            exclude: Keys the index must not return.
        """
        return EntryFilter(
            since=self.since(now),
            tags=tuple(t.casefold() for t in self.tags),
            any_tag=self.any_tag,
            project=None if self.project is None else self.project.casefold(),
            exclude=frozenset(exclude),
        )

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
    entries = unit.all(JournalEntry)
    if since is None and where.project is None and not where.tags:
        found = list(entries)  # no filter: skip a call per entry
    else:
        found = [e for e in entries if where.accepts(e, since)]
    found.sort(key=_NEWEST, reverse=True)
    return found


_NEWEST = attrgetter("timestamp", "id")


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
    meaning: SemanticJournal | None = None,
) -> JournalSearch:
    """Search the filtered entries; semantic when asked and possible, else text.

    Semantic mode returns the entries at least ``meaning.min_similarity`` similar to the
    query, best first (ties newest first), and counts all of them in ``total_matches``
    (on PostgreSQL, over a window of more than 16,384 entries, the top hits come from an
    HNSW walk and the count is a floor at 256: docs/postgresql.md); it may find none. An
    empty query matches every filtered entry (newest first).
    """
    text = query.strip()
    if semantic and meaning is not None and text:
        if meaning.index is not None:
            return await _indexed(unit, now, text, where, limit, meaning, meaning.index)
        return await _by_meaning(text, filter_entries(unit, now, where), limit, meaning)
    candidates = filter_entries(unit, now, where)
    needle = text.casefold()
    matches = [e for e in candidates if needle in e.content.casefold()]
    note = None
    if semantic and text and meaning is None:
        note = "No embedder is configured, so the search used text matching"
    return JournalSearch("text", matches[:limit], len(matches), note=note)


async def _by_meaning(
    text: str, candidates: list[JournalEntry], limit: int, meaning: SemanticJournal
) -> JournalSearch:
    query = (await embed_async(meaning.embedder, [text]))[0]
    keys = [str(e.id) for e in candidates]  # JournalEntry.record_key, without the call
    if meaning.index is not None:
        ranked = meaning.index.rank(query, keys, limit=limit, threshold=meaning.min_similarity)
    else:
        ranked = Ranked([], 0, keys)
    at = dict(zip(keys, range(len(keys)), strict=True))
    fresh = [candidates[at[key]] for key in ranked.unembedded]
    fresh_scores = await EmbeddingRanker(meaning.embedder).scores(query, [e.content for e in fresh])
    extra, extra_total = rank_candidates(
        ranked.unembedded, fresh_scores, limit=limit, threshold=meaning.min_similarity
    )
    # Best first; ties keep the candidates' order (newest first), as within each list.
    hits = sorted([*ranked.hits, *extra], key=lambda h: (-h.score, at[h.key]))[:limit]
    return JournalSearch(
        "semantic",
        [candidates[at[h.key]] for h in hits],
        ranked.total + extra_total,
        scores=[h.score for h in hits],
    )


def _newest(entry: JournalEntry) -> tuple[str, int]:
    return (entry.timestamp, entry.id)


async def _indexed(
    unit: Unit,
    now: datetime,
    text: str,
    where: JournalFilter,
    limit: int,
    meaning: SemanticJournal,
    index: JournalIndex,
) -> JournalSearch:
    """Semantic mode through the index's own filter: no pass over every entry here.

    The index ranks the committed entries; what this unit wrote and has not committed is
    left out of it and ranked here with the entries that have no current vector (each
    embedded at query time), as :func:`_by_meaning` would rank them all.
    """
    query = (await embed_async(meaning.embedder, [text]))[0]
    since = where.since(now)
    shadowed: set[str] = set()
    written: list[JournalEntry] = []
    for (kind, key), record in unit.pending_changes().items():
        if kind == JournalEntry.kind:
            shadowed.add(key)
            if isinstance(record, JournalEntry) and where.accepts(record, since):
                written.append(record)
    candidates = where.for_index(now, exclude=shadowed)
    ranked = index.search(query, candidates, limit=limit, threshold=meaning.min_similarity)
    found = unit.get_many(JournalEntry, [*(h.key for h in ranked.hits), *ranked.unembedded])
    fresh = [found[k] for k in ranked.unembedded if k in found]
    fresh.extend(written)
    fresh.sort(key=_newest, reverse=True)
    fresh_scores = await EmbeddingRanker(meaning.embedder).scores(query, [e.content for e in fresh])
    fresh_keys = [str(e.id) for e in fresh]
    extra, extra_total = rank_candidates(
        fresh_keys, fresh_scores, limit=limit, threshold=meaning.min_similarity
    )
    found.update(zip(fresh_keys, fresh, strict=True))
    hits: list[Neighbour] = [h for h in ranked.hits if h.key in found]
    # Best first, ties newest first, as within each list.
    hits = sorted([*hits, *extra], key=lambda h: (h.score, *_newest(found[h.key])), reverse=True)
    hits = hits[:limit]
    return JournalSearch(
        "semantic",
        [found[h.key] for h in hits],
        ranked.total + extra_total,
        scores=[h.score for h in hits],
    )
