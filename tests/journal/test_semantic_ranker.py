"""search_journal's semantic ranker: correct past its vector cache, and under concurrency."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from mindspace import Assistant
from mindspace.config import Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.embeddings.port import Vectors
from mindspace.journal import ranker
from mindspace.journal.ranker import EmbeddingRanker
from mindspace.journal.records import JournalEntry

WORDS = ("forge", "sword", "river", "map", "festival", "noon", "harvest", "market", "bread")


def _entries(count: int, start: int = 1) -> list[JournalEntry]:
    """Distinct entries that share words, so their similarities differ (and some tie)."""
    return [
        JournalEntry(
            id=i,
            timestamp=f"2025-12-06T10:{i % 60:02d}:00+00:00",
            content=f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]} note {i}",
            importance=5,
        )
        for i in range(start, start + count)
    ]


def _expected(
    embedder: HashingEmbedder, query: str, entries: Sequence[JournalEntry], limit: int
) -> list[tuple[int, float]]:
    """The plain way: embed everything, one score each, stable sort (ties keep order)."""
    vectors = embedder.embed([e.content for e in entries])
    scores = vectors @ embedder.embed([query])[0]
    order = np.argsort(-scores, kind="stable")[:limit]
    return [(entries[i].id, float(scores[i])) for i in order]


async def _rank(
    ranking: EmbeddingRanker, query: str, entries: Sequence[JournalEntry], limit: int
) -> list[tuple[int, float]]:
    """The ranker's scores for ``entries``, best ``limit`` first (ties keep their order)."""
    vector = ranking.embedder.embed([query])[0]
    scores = await ranking.scores(vector, [e.content for e in entries])
    order = np.argsort(-scores, kind="stable")[:limit]
    return [(entries[i].id, float(scores[i])) for i in order]


def _assert_same(got: list[tuple[int, float]], expected: list[tuple[int, float]]) -> None:
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert np.allclose([s for _, s in got], [s for _, s in expected], rtol=0, atol=1e-6)


async def test_more_candidates_than_the_cache_limit_rank_correctly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ranker, "_CACHE_LIMIT", 4)
    embedder = HashingEmbedder(72)  # a name no other test uses: a cold cache
    ranking = EmbeddingRanker(embedder)
    everything = _entries(30)
    for query, entries, limit in [
        ("forge sword", everything[:12], 5),
        ("forge sword", everything[:12], 50),  # again, now partly cached
        ("harvest festival at noon", everything[10:], 3),  # compacts the cache
        ("river map", everything, 30),
        ("river map", everything[:3], 2),  # a small subset of the cached rows
    ]:
        got = await _rank(ranking, query, entries, limit)
        _assert_same(got, _expected(embedder, query, entries, limit))


async def test_search_journal_past_the_cache_limit(
    monkeypatch: pytest.MonkeyPatch, make_assistant: Callable[..., Assistant]
) -> None:
    monkeypatch.setattr(ranker, "_CACHE_LIMIT", 3)
    everything = Settings(journal_min_similarity=-1.0)  # no cut-off: every entry matches
    assistant = make_assistant("semantic-many", embedder=HashingEmbedder(88), settings=everything)
    for entry in _entries(10):
        await assistant.call_tool("add_journal_entry", {"content": entry.content})
    await assistant.call_tool("add_journal_entry", {"content": "the harvest festival at noon"})
    found = await assistant.call_tool("search_journal", {"query": "festival at noon", "limit": 4})
    assert found["success"] is True, found
    assert found["mode"] == "semantic"
    assert found["results"][0]["content"] == "the harvest festival at noon"
    assert found["count"] == 4
    assert found["total_matches"] == 11


class _Gated(HashingEmbedder):
    """Embeds on the loop; a batch holding ``hold`` waits until ``gate`` is set."""

    def __init__(self, dim: int, hold: str) -> None:
        super().__init__(dim)
        self.hold = hold
        self.gate = asyncio.Event()
        self.batches: list[list[str]] = []

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        self.batches.append(list(texts))
        if self.hold in texts:
            await self.gate.wait()
        return self.embed(texts)


async def test_a_compaction_during_an_embedding_does_not_lose_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ranker, "_CACHE_LIMIT", 6)
    held = JournalEntry(id=99, timestamp="2025-12-06T11:00:00+00:00", content="slow", importance=5)
    embedder = _Gated(96, hold=held.content)
    ranking = EmbeddingRanker(embedder)
    first, second = _entries(5), _entries(6, start=100)
    await _rank(ranking, "warm up", first, 1)  # the first five are cached
    # This call finds the five cached and awaits the embedding of the sixth...
    slow = asyncio.create_task(_rank(ranking, "river sword", [*first, held], 6))
    await asyncio.sleep(0)
    # ...while six new texts overflow the cache: it is compacted to this call's rows.
    quick = await _rank(ranking, "forge map", second, 6)
    embedder.gate.set()
    slow_got = await slow
    _assert_same(quick, _expected(embedder, "forge map", second, 6))
    _assert_same(slow_got, _expected(embedder, "river sword", [*first, held], 6))
    # The slow call re-embedded the rows the compaction dropped, instead of failing.
    assert embedder.batches[-1] == [e.content for e in first]
