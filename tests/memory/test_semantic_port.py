"""The semantic-store port's contract, on every implementation.

Each test runs on SQLite (the embedded exact :class:`MemoryIndex`), on PostgreSQL
(:class:`PgSemanticIndex`: pgvector HNSW and full-text search) and on Mem0
(:class:`Mem0SemanticIndex`: an embedded Qdrant on disk, shared by the assistants of the
database) through ``SqlStore.semantic_index``, over a small corpus of hand-made unit
vectors whose expected order is clear.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mindspace.config import Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.memory.index import MemoryIndex
from mindspace.memory.records import Memory
from mindspace.state.semantic import Hit, SearchRequest, SemanticIndex, SemanticStore
from mindspace.state.unit import StateCache
from mindspace.storage import SqlStore
from mindspace.storage.mem0_semantic import Mem0SemanticIndex, mem0_semantic
from mindspace.storage.pg_semantic import PgSemanticIndex
from mindspace.storage.sql import SemanticFactory

WHEN = "2025-12-06T10:00:00Z"
DIM = 8


def unit_vector(*axes: int) -> np.ndarray:
    """A unit vector along the sum of ``axes`` (DIM dimensions)."""
    v = np.zeros(DIM, dtype=np.float32)
    for axis in axes:
        v[axis] = 1.0
    return (v / np.linalg.norm(v)).astype(np.float32)


def memory(
    key: str,
    content: str,
    vector: np.ndarray | None,
    *,
    tags: Sequence[str] = (),
    trust: float = 0.8,
    embedder: str = "hand",
) -> Memory:
    return Memory(
        id=key,
        content=content,
        tags=tuple(tags),
        source_trust=trust,
        created_at=WHEN,
        occurred_at=WHEN,
        embedder=embedder,
        embedding=None if vector is None else vector.tobytes(),
    )


CORPUS = [
    memory("mem_1", "Alice keeps bees in the orchard", unit_vector(0)),
    memory("mem_2", "Bob repairs old clocks", unit_vector(1)),
    memory("mem_3", "The cellar floods every spring", unit_vector(2)),
    memory("mem_4", "Alice sells honey at the market", unit_vector(0, 3), tags=["Market"]),
    memory("mem_5", "Rumour: storms are coming", unit_vector(4), tags=["weather"], trust=0.3),
    memory("mem_6", "Alice built a new hive", unit_vector(0), embedder="another-model"),
    memory("mem_7", "Carol paints lighthouses", None),
]


@dataclass
class Setup:
    store: SqlStore
    cache: StateCache
    index: SemanticIndex

    def write(self, *records: Memory) -> None:
        unit = self.cache.begin()
        for record in records:
            unit.put(record)
        self.cache.commit(unit)

    def delete(self, key: str) -> None:
        unit = self.cache.begin()
        unit.delete(Memory, key)
        self.cache.commit(unit)


@dataclass(frozen=True)
class Backend:
    name: str
    url: str
    semantic: SemanticFactory | None = None


@pytest.fixture(params=["sqlite", "postgresql", "mem0"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """Each implementation in turn; Mem0 keeps its Qdrant files beside the SQLite store."""
    if request.param == "postgresql":
        return Backend("postgresql", request.getfixturevalue("pg_url"))
    url = f"sqlite:///{tmp_path / 'mindspace.db'}"
    if request.param == "mem0":
        return Backend("mem0", url, mem0_semantic(Settings(mem0_path=tmp_path / "mem0")))
    return Backend("sqlite", url)


def open_setup(backend: Backend, key: str = "keeper") -> Setup:
    store = SqlStore(backend.url, semantic=backend.semantic)
    info = store.open_assistant(key, create=True)
    cache = StateCache(store, info.id, info.revision)
    return Setup(store, cache, store.semantic_index(cache, "hand"))


@pytest.fixture
def setup(backend: Backend) -> Iterator[Setup]:
    """The corpus for 'keeper', and a rival assistant with look-alike memories."""
    rival = open_setup(backend, "rival")
    rival.write(
        memory("mem_90", "Alice keeps bees and sells honey", unit_vector(0)),
        memory("mem_91", "Bob repairs clocks", unit_vector(1)),
    )
    rival.index.count()  # the rival's vectors are in Mem0's collection too
    found = open_setup(backend)
    found.write(*CORPUS)
    yield found
    found.store.close()
    rival.store.close()


def keys(hits: Sequence[object]) -> list[str]:
    return [getattr(h, "key") for h in hits]  # noqa: B009 - Hit and Neighbour alike


def test_each_backend_gives_its_own_implementation(backend: Backend, setup: Setup) -> None:
    assert isinstance(setup.store, SemanticStore)
    assert isinstance(setup.index, SemanticIndex)
    expected = {"sqlite": MemoryIndex, "postgresql": PgSemanticIndex, "mem0": Mem0SemanticIndex}
    assert isinstance(setup.index, expected[backend.name])
    assert setup.index.count() == len(CORPUS)


def test_dense_search_orders_by_cosine_and_drops_rows_without_evidence(setup: Setup) -> None:
    hits = setup.index.search(SearchRequest("", unit_vector(0)), limit=10)
    # mem_6 points the same way but was made by another embedder; the rest are orthogonal.
    assert keys(hits) == ["mem_1", "mem_4"]
    assert hits[0].relevance == pytest.approx(1.0, abs=1e-6)
    assert hits[1].relevance == pytest.approx(0.7071, abs=1e-4)
    assert 0.0 < hits[1].score < hits[0].score < 1.0


def test_lexical_search_scores_bm25(setup: Setup) -> None:
    hits = setup.index.search(SearchRequest("honey at the market"), limit=10)
    assert keys(hits) == ["mem_4"]
    assert hits[0].relevance is None
    assert hits[0].lexical > 0
    both = setup.index.search(SearchRequest("honey clocks"), limit=10)
    assert sorted(keys(both)) == ["mem_2", "mem_4"]
    # Both terms occur once in the corpus, in four-term memories: equal BM25.
    assert both[0].lexical == pytest.approx(both[1].lexical, rel=1e-5)


def test_hybrid_search_finds_both_kinds_of_evidence(setup: Setup) -> None:
    hits = setup.index.search(SearchRequest("clocks", unit_vector(0)), limit=10)
    assert sorted(keys(hits)) == ["mem_1", "mem_2", "mem_4"]
    by_key = {h.key: h for h in hits}
    assert by_key["mem_2"].lexical > 0
    assert by_key["mem_1"].relevance == pytest.approx(1.0, abs=1e-6)
    assert (
        keys(setup.index.search(SearchRequest("clocks", unit_vector(0)), limit=2)) == keys(hits)[:2]
    )


def test_filters_on_trust_and_tags(setup: Setup) -> None:
    storms = setup.index.search(SearchRequest("storms", unit_vector(4)), limit=10)
    assert keys(storms) == ["mem_5"]
    assert (
        setup.index.search(SearchRequest("storms", unit_vector(4), min_trust=0.5), limit=10) == []
    )
    tagged = setup.index.search(SearchRequest("Alice", unit_vector(0), tags=["MARKET"]), limit=10)
    assert keys(tagged) == ["mem_4"]
    assert (
        setup.index.search(SearchRequest("Alice", unit_vector(0), tags=["market", "x"]), limit=10)
        == []
    )


def test_another_assistants_memories_are_never_returned(setup: Setup) -> None:
    for query, vector in [("Alice bees honey", unit_vector(0)), ("Bob clocks", unit_vector(1))]:
        found = keys(setup.index.search(SearchRequest(query, vector), limit=50))
        assert found
        assert not {"mem_90", "mem_91"} & set(found)
    near = setup.index.nearest(np.stack([unit_vector(0)]), k=10, threshold=0.1, exclude=[""])
    assert not {"mem_90", "mem_91"} & set(keys(near[0]))


def test_another_embedders_vectors_are_found_lexically_only(setup: Setup) -> None:
    hits = setup.index.search(SearchRequest("hive", unit_vector(0)), limit=10)
    by_key = {h.key: h for h in hits}
    assert "mem_6" in by_key
    assert by_key["mem_6"].relevance is None
    assert by_key["mem_6"].lexical > 0
    near = setup.index.nearest(np.stack([unit_vector(0)]), k=10, threshold=0.1, exclude=[""])
    assert "mem_6" not in keys(near[0])


def test_deletes_and_updates_are_seen(setup: Setup) -> None:
    setup.delete("mem_1")
    assert "mem_1" not in keys(
        setup.index.search(SearchRequest("Alice bees", unit_vector(0)), limit=10)
    )
    setup.write(memory("mem_2", "Bob bakes rye bread", unit_vector(5)))
    assert setup.index.search(SearchRequest("clocks", unit_vector(1)), limit=10) == []
    assert keys(setup.index.search(SearchRequest("bread", unit_vector(5)), limit=10)) == ["mem_2"]
    assert setup.index.count() == len(CORPUS) - 1
    setup.write(memory("mem_8", "Dmitri collects old maps", unit_vector(6)))
    assert keys(setup.index.search(SearchRequest("maps"), limit=10)) == ["mem_8"]
    assert setup.index.count() == len(CORPUS)


def test_rankings_give_the_blend_and_each_signal_alone_from_one_search(setup: Setup) -> None:
    ranked = setup.index.rankings(SearchRequest("clocks", unit_vector(0)), limit=10, depth=5)
    assert ranked.blended == setup.index.search(SearchRequest("clocks", unit_vector(0)), limit=10)
    assert sorted(keys(ranked.blended)) == ["mem_1", "mem_2", "mem_4"]
    # Alone, each signal knows only its own evidence: similarity, or the shared word.
    assert keys(ranked.dense)[:2] == ["mem_1", "mem_4"]
    assert keys(ranked.lexical) == ["mem_2"]
    asked: list[tuple[str, np.ndarray | None, dict[str, Any]]] = [
        ("Alice honey clocks", unit_vector(0, 1), {}),
        ("Alice", unit_vector(0), {"tags": ["MARKET"]}),
        ("storms Alice", unit_vector(4), {"min_trust": 0.5}),
        ("Alice bees hive", None, {}),
    ]
    for query, vector, filters in asked:
        ranked = setup.index.rankings(SearchRequest(query, vector, **filters), limit=3, depth=2)
        assert ranked.blended == setup.index.search(
            SearchRequest(query, vector, **filters), limit=3
        )
        dense = setup.index.search(
            SearchRequest(query, vector, dense_weight=1.0, **filters), limit=2
        )
        assert ranked.dense == (dense if vector is not None else [])
        lexical = setup.index.search(
            SearchRequest(query, vector, dense_weight=0.0, **filters), limit=2
        )
        assert ranked.lexical == [h for h in lexical if h.lexical > 0]


def test_nearest_keeps_the_threshold_and_leaves_out_the_memory_itself(setup: Setup) -> None:
    batch = np.stack([unit_vector(0), unit_vector(1), unit_vector(7)])
    near = setup.index.nearest(batch, k=3, threshold=0.5, exclude=["mem_1", "mem_2", ""])
    assert [keys(row) for row in near] == [["mem_4"], [], []]
    assert near[0][0].score == pytest.approx(0.7071, abs=1e-4)
    near = setup.index.nearest(batch[:1], k=3, threshold=0.5, exclude=["mem_4"])
    assert keys(near[0]) == ["mem_1"]
    assert setup.index.nearest(batch[:1], k=3, threshold=0.9, exclude=["mem_1"]) == [[]]
    assert setup.index.nearest(batch[:1], k=1, threshold=0.0, exclude=[""])[0][0].key == "mem_1"


SUBJECTS = ["Alice", "Bob", "Carol", "Dmitri", "Esme", "Farid"]
DEEDS = [
    "brews dark ale in the cellar",
    "repairs clocks for the mayor",
    "paints lighthouses by the sea",
    "keeps bees behind the orchard",
    "trains falcons on the hill",
    "sells rope and lantern oil",
    "reads star charts at night",
    "fishes for eels in the river",
    "bakes rye bread at dawn",
    "forges horseshoes and nails",
]
QUERIES = [
    "who brews ale",
    "clocks repaired",
    "lighthouse paintings",
    "bees in the orchard",
    "falcon training",
    "Esme rope",
    "star charts",
    "river eels",
    "Farid bread",
    "horseshoes",
    "Carol",
    "night",
]


def test_every_backend_gives_the_same_top_hits(tmp_path: Path, pg_url: str) -> None:
    embedder = HashingEmbedder(64)
    texts = [
        f"{subject} {deed}"
        for n, subject in enumerate(SUBJECTS)
        for deed in DEEDS[n % 3 :: 2][:5]  # each subject does five things
    ]
    vectors = embedder.embed(texts)
    records = [
        memory(f"mem_{n}", text, vectors[n], embedder=embedder.name) for n, text in enumerate(texts)
    ]
    found: dict[str, list[list[Hit]]] = {}
    mem0 = mem0_semantic(Settings(mem0_path=None))
    for name, url, semantic in [
        ("sqlite", f"sqlite:///{tmp_path / 'same.db'}", None),
        ("postgresql", pg_url, None),
        ("mem0", f"sqlite:///{tmp_path / 'mem0.db'}", mem0),
    ]:
        store = SqlStore(url, semantic=semantic)
        info = store.open_assistant("keeper", create=True)
        cache = StateCache(store, info.id, info.revision)
        index = store.semantic_index(cache, embedder.name)
        Setup(store, cache, index).write(*records)
        query_vectors = embedder.embed(QUERIES)
        found[name] = [
            index.search(SearchRequest(q, query_vectors[n]), limit=len(records))
            for n, q in enumerate(QUERIES)
        ]
        store.close()
    assert all(row for row in found["sqlite"])
    # Every memory is a candidate on PostgreSQL and Mem0 here, so the fused scores are
    # the embedded ones up to the embedded index's int8-quantized similarities: the best
    # hits are the same memories, scored within 0.005 and in the same order, apart from
    # swaps between memories scored within 0.005.
    for other in ("postgresql", "mem0"):
        for other_row, sqlite_row in zip(found[other], found["sqlite"], strict=True):
            assert_same_ranking(other_row, sqlite_row)


def assert_same_ranking(
    hits: Sequence[Hit], reference: Sequence[Hit], top: int = 5, tolerance: float = 0.005
) -> None:
    """``hits`` rank the best memories of ``reference`` alike, up to near-ties.

    The embedded index's int8-quantized similarities move a score by a few thousandths,
    so scores are compared within ``tolerance``, and only an inversion of two memories
    whose reference scores differ by more than ``tolerance`` is a difference: the first
    ``top`` hits are scored alike and ordered alike, and every memory that clearly
    belongs among them (scored above the reference's next one by more than
    ``tolerance``) is among them.
    """
    expected = {h.key: h.score for h in reference}
    best = [h.key for h in hits[:top]]
    for key, hit in zip(best, hits, strict=False):
        assert key in expected, key
        assert hit.score == pytest.approx(expected[key], abs=tolerance), key
    for at, better in enumerate(best):
        for worse in best[at + 1 :]:
            assert expected[better] >= expected[worse] - tolerance, (better, worse)
    cut = reference[top].score if len(reference) > top else -1.0
    clearly = {h.key for h in reference[:top] if h.score > cut + tolerance}
    assert clearly <= set(best), sorted(clearly - set(best))


def test_postgresql_standardises_bm25_over_every_memory_as_embedded(
    tmp_path: Path, pg_url: str
) -> None:
    # More memories hold the query's terms than PostgreSQL takes as candidates (100), so
    # standardising over the candidates alone would give other scores than embedded.
    rng = np.random.default_rng(7)
    words = ["amber", "basalt", "cedar", "dune", "ember", "fjord", "glacier", "heath"]
    records = [
        memory(f"mem_{n}", " ".join(rng.choice(words, size=int(rng.integers(2, 7)))), None)
        for n in range(300)
    ]
    found: dict[str, list[float]] = {}
    for name, url in [("sqlite", f"sqlite:///{tmp_path / 'whole.db'}"), ("postgresql", pg_url)]:
        store = SqlStore(url)
        info = store.open_assistant("keeper", create=True)
        cache = StateCache(store, info.id, info.revision)
        index = store.semantic_index(cache, "hand")
        Setup(store, cache, index).write(*records)
        found[name] = [h.score for h in index.search(SearchRequest("amber glacier"), limit=20)]
        store.close()
    # Many memories tie (the same words), so compare the scores rank by rank.
    assert len(found["sqlite"]) == 20
    assert found["postgresql"] == pytest.approx(found["sqlite"], abs=1e-4)
