"""Recall's dense side through the cells, from ``cells_from`` memories.

Past ``CELLS_FROM`` rows an embedded index that holds cells (built by ``nearest``: a
memory write's reconcile, the night's linking) scores a search's similarity on the rows
of the cells the query probes and on the best rows by BM25 (``memory/scoring.py``), not
on every row. These tests put such an index (``cells_from=0``) beside an exact one over
the same SQLite store of clustered vectors: the same best memories, the same
similarities, and a memory that only shares the query's rare word, far from its vector,
still found (the BM25 candidates). An index that only searches builds no cells.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from mindspace import ManualClock, Settings
from mindspace.memory.index import MemoryIndex
from mindspace.memory.records import Memory
from mindspace.memory.semantic import APPROXIMATE_CANDIDATES, CANDIDATES, SemanticMemory
from mindspace.state.port import StoredRecord
from mindspace.state.semantic import SearchRequest
from mindspace.state.unit import StateCache
from mindspace.storage import SqlStore

WHEN = "2025-12-06T10:00:00Z"
DIM = 16
CLUSTERS = 40
MEMORIES = 6_000
WORDS = [f"word{k}" for k in range(300)]


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    rng = np.random.default_rng(5)
    centres = rng.normal(size=(CLUSTERS, DIM))
    rows = centres[rng.integers(0, CLUSTERS, size=MEMORIES)] + 0.35 * rng.normal(
        size=(MEMORIES, DIM)
    )
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory, vectors: np.ndarray) -> Iterator[StateCache]:
    rng = np.random.default_rng(6)
    path: Path = tmp_path_factory.mktemp("cells") / "memories.db"
    store = SqlStore(f"sqlite:///{path}")
    info = store.open_assistant("keeper", create=True)
    cache = StateCache(store, info.id, info.revision)
    unit = cache.begin()
    for n, vector in enumerate(vectors):
        words = " ".join(WORDS[int(k)] for k in rng.integers(0, len(WORDS), size=6))
        unit.put(_memory(f"mem_{n + 1}", words, vector, trust=0.3 if n % 10 == 0 else 0.8))
    # The only memory with the word "zanzibar", pointing away from every query below.
    unit.put(_memory("mem_rare", "a letter from zanzibar", -vectors[0]))
    cache.commit(unit)
    yield cache
    store.close()


def _memory(key: str, content: str, vector: np.ndarray, *, trust: float = 0.8) -> Memory:
    return Memory(
        id=key,
        content=content,
        source_trust=trust,
        created_at=WHEN,
        occurred_at=WHEN,
        embedder="hand",
        embedding=vector.astype(np.float32).tobytes(),
    )


def _queries(vectors: np.ndarray, count: int) -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(7)
    asked = []
    for row in rng.choice(MEMORIES, size=count, replace=False):
        vector = vectors[row] + 0.2 * rng.normal(size=DIM)
        words = " ".join(WORDS[int(k)] for k in rng.integers(0, len(WORDS), size=3))
        asked.append((words, (vector / np.linalg.norm(vector)).astype(np.float32)))
    return asked


def _with_cells(cache: StateCache, vectors: np.ndarray) -> MemoryIndex:
    """An index through the cells, which a write's reconcile (``nearest``) has built."""
    index = MemoryIndex(cache, "hand", cells_from=0)
    index.nearest(vectors[:1], k=3, threshold=0.9, exclude=["mem_1"])
    assert index.cells_nbytes > 0
    return index


def test_the_cells_find_the_exact_searchs_best_memories(
    cache: StateCache, vectors: np.ndarray
) -> None:
    cells = _with_cells(cache, vectors)
    exact = MemoryIndex(cache, "hand", cells_from=2**62)
    overlaps = []
    for query, vector in _queries(vectors, 40):
        found = cells.rankings(SearchRequest(query, vector, min_trust=0.5), limit=10, depth=10)
        truth = exact.rankings(SearchRequest(query, vector, min_trust=0.5), limit=10, depth=10)
        assert found.blended[0].key == truth.blended[0].key
        # BM25 alone is scored on every row either way (which of equal scores is kept
        # at the cut is arbitrary in both).
        assert [h.lexical for h in found.lexical] == [h.lexical for h in truth.lexical]
        overlaps.append(len({h.key for h in found.blended} & {h.key for h in truth.blended}))
        by_key = {h.key: h for h in truth.blended}
        for hit in found.blended:
            assert cache.begin().get(Memory, hit.key).source_trust >= 0.5  # type: ignore[union-attr]
            if hit.key in by_key:
                # The same int8 similarity; the blend's spread is estimated from a sample.
                assert hit.relevance == by_key[hit.key].relevance
                assert hit.score == pytest.approx(by_key[hit.key].score, abs=0.02)
    assert sum(overlaps) / len(overlaps) >= 9.5


def test_a_memory_far_from_the_query_is_still_found_by_its_words(
    cache: StateCache, vectors: np.ndarray
) -> None:
    cells = _with_cells(cache, vectors)
    exact = MemoryIndex(cache, "hand", cells_from=2**62)
    found = cells.rankings(SearchRequest("zanzibar", vectors[0]), limit=10, depth=10)
    truth = exact.rankings(SearchRequest("zanzibar", vectors[0]), limit=10, depth=10)
    rare = next(h for h in found.blended if h.key == "mem_rare")
    assert rare == next(h for h in truth.blended if h.key == "mem_rare")
    assert rare.relevance == pytest.approx(-1.0, abs=0.01)
    assert [h.key for h in found.lexical] == ["mem_rare"]


def test_an_index_that_only_searches_builds_no_cells_and_stays_exact(
    cache: StateCache, vectors: np.ndarray
) -> None:
    searching = MemoryIndex(cache, "hand", cells_from=0)
    exact = MemoryIndex(cache, "hand", cells_from=2**62)
    for query, vector in _queries(vectors, 5):
        found = searching.rankings(SearchRequest(query, vector), limit=10, depth=10)
        assert found == exact.rankings(SearchRequest(query, vector), limit=10, depth=10)
    assert searching.cells_nbytes == 0


def test_a_recall_through_the_cells_reads_fewer_candidates_for_the_same_page(
    cache: StateCache, vectors: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each candidate the rules look at is a record read (a store query on a miss); an
    # approximate index hands them fewer, exact ones all of CANDIDATES.
    store = cache.store
    read: list[str] = []
    load_keys = store.load_keys

    def counting(assistant_id: int, kind: str, keys: Sequence[str]) -> list[StoredRecord]:
        read.extend(keys)
        return load_keys(assistant_id, kind, keys)

    monkeypatch.setattr(store, "load_keys", counting)
    pages: dict[str, list[list[str]]] = {}
    reads: dict[str, int] = {}
    for name, cells_from in (("exact", 2**62), ("cells", 0)):
        fresh = StateCache(store, cache.assistant_id, cache.revision)  # nothing read yet
        index = MemoryIndex(fresh, "hand", cells_from=cells_from)
        if cells_from == 0:
            index.nearest(vectors[:1], k=3, threshold=0.9, exclude=["mem_1"])
        assert index.approximate is (name == "cells")
        memory = SemanticMemory(fresh.begin(), ManualClock(), Settings(), None, index)
        read.clear()
        pages[name] = [
            [r.memory.id for r in memory.recall(query, limit=5, vector=vector)]
            for query, vector in _queries(vectors, 10)
        ]
        reads[name] = len(set(read))
    assert reads["exact"] >= 10 * (5 + CANDIDATES) * 0.9
    assert reads["cells"] <= reads["exact"] * (5 + APPROXIMATE_CANDIDATES + 10) / (5 + CANDIDATES)
    same = [len(set(c) & set(e)) for c, e in zip(pages["cells"], pages["exact"], strict=True)]
    assert sum(same) >= 0.9 * 5 * len(same)
