"""The journal side of the semantic-store port, on both implementations.

Each test runs on SQLite (the embedded :class:`EntryVectorIndex`) and on PostgreSQL
(:class:`PgJournalIndex`: an exact pgvector scan in SQL) through
``SqlStore.journal_index``, over hand-made unit vectors whose expected order is clear.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindspace.journal.records import EntryVector, JournalEntry, text_digest
from mindspace.journal.vectors import EntryVectorIndex
from mindspace.state.semantic import JournalIndex, SemanticStore, rank_candidates
from mindspace.state.unit import StateCache
from mindspace.storage import SqlStore
from mindspace.storage.pg_journal import PgJournalIndex

DIM = 8
WHEN = "2025-12-06T10:00:00Z"


def unit_vector(*axes: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    for axis in axes:
        v[axis] = 1.0
    return (v / np.linalg.norm(v)).astype(np.float32)


TEXTS = {
    "1": ("bees in the orchard", unit_vector(0)),
    "2": ("old clocks repaired", unit_vector(1)),
    "3": ("honey sold at market", unit_vector(0, 3)),
    "4": ("more bees swarmed", unit_vector(0)),
    "5": ("the cellar floods", unit_vector(2)),
}


def vector_record(key: str, *, embedder: str = "hand", text: str | None = None) -> EntryVector:
    content, vector = TEXTS[key]
    return EntryVector(
        key=key,
        embedder=embedder,
        digest=text_digest(text if text is not None else content),
        embedding=vector.tobytes(),
    )


def entry(key: str, *, text: str | None = None) -> JournalEntry:
    content = text if text is not None else TEXTS[key][0]
    return JournalEntry(id=int(key), timestamp=WHEN, content=content, importance=5)


@dataclass
class Setup:
    store: SqlStore
    cache: StateCache
    index: JournalIndex

    def write(self, *records: EntryVector | JournalEntry) -> None:
        unit = self.cache.begin()
        for record in records:
            unit.put(record)
        self.cache.commit(unit)

    def delete(self, model: type[EntryVector] | type[JournalEntry], key: str) -> None:
        unit = self.cache.begin()
        unit.delete(model, key)
        self.cache.commit(unit)


def open_setup(url: str, key: str = "keeper") -> Setup:
    store = SqlStore(url)
    info = store.open_assistant(key, create=True)
    cache = StateCache(store, info.id, info.revision)
    assert isinstance(store, SemanticStore)
    return Setup(store, cache, store.journal_index(cache, "hand"))


@pytest.fixture
def setup(backend_url: str) -> Iterator[Setup]:
    opened = open_setup(backend_url)
    opened.write(*(entry(k) for k in TEXTS), *(vector_record(k) for k in ("1", "2", "3", "4")))
    yield opened
    opened.store.close()


def test_each_backend_has_its_own_journal_index(setup: Setup) -> None:
    expected = PgJournalIndex if setup.store.postgres else EntryVectorIndex
    assert isinstance(setup.index, expected)
    assert isinstance(setup.index, JournalIndex)


def test_rank_orders_by_similarity_ties_in_candidate_order(setup: Setup) -> None:
    ranked = setup.index.rank(unit_vector(0), ["1", "2", "3", "4"], limit=10, threshold=0.5)
    assert [h.key for h in ranked.hits] == ["1", "4", "3"]  # 1 and 4 tie: candidate order
    assert ranked.hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert ranked.hits[2].score == pytest.approx(float(np.sqrt(0.5)), abs=1e-5)
    assert ranked.total == 3
    assert ranked.unembedded == []
    again = setup.index.rank(unit_vector(0), ["4", "1"], limit=10, threshold=0.5)
    assert [h.key for h in again.hits] == ["4", "1"]


def test_total_counts_every_match_beyond_the_limit(setup: Setup) -> None:
    ranked = setup.index.rank(unit_vector(0), ["1", "2", "3", "4"], limit=1, threshold=0.5)
    assert [h.key for h in ranked.hits] == ["1"]
    assert ranked.total == 3


def test_nothing_above_the_cut_off_is_no_match(setup: Setup) -> None:
    ranked = setup.index.rank(unit_vector(2), ["1", "2", "3", "4"], limit=10, threshold=0.3)
    assert ranked.hits == []
    assert ranked.total == 0


def test_only_candidates_are_ranked_and_unstored_ones_are_reported(setup: Setup) -> None:
    ranked = setup.index.rank(unit_vector(2), ["5", "2", "1"], limit=10, threshold=-1)
    assert [h.key for h in ranked.hits] == ["2", "1"]  # 5 has no stored vector
    assert ranked.unembedded == ["5"]
    assert setup.index.unembedded(limit=10) == ["5"]


def test_a_vector_of_other_text_or_another_embedder_is_not_current(setup: Setup) -> None:
    setup.write(
        vector_record("5", text="the cellar was dry"),  # made before the entry changed
        vector_record("2", embedder="another-model"),
    )
    ranked = setup.index.rank(unit_vector(2), ["5", "2", "1"], limit=10, threshold=-1)
    assert [h.key for h in ranked.hits] == ["1"]
    assert ranked.unembedded == ["5", "2"]
    assert setup.index.unembedded(limit=10) == ["2", "5"]  # oldest entry first
    assert setup.index.unembedded(limit=1) == ["2"]


def test_an_edited_entry_needs_a_new_vector(setup: Setup) -> None:
    setup.write(entry("1", text="bees left the orchard"))
    ranked = setup.index.rank(unit_vector(0), ["1", "4"], limit=10, threshold=0.5)
    assert [h.key for h in ranked.hits] == ["4"]
    assert ranked.unembedded == ["1"]
    assert setup.index.unembedded(limit=10) == ["1", "5"]


def test_writes_deletes_and_orphans_reach_the_index(setup: Setup) -> None:
    setup.write(vector_record("5"))
    setup.delete(EntryVector, "1")
    ranked = setup.index.rank(unit_vector(2), ["5", "1"], limit=10, threshold=0.5)
    assert [h.key for h in ranked.hits] == ["5"]
    assert ranked.unembedded == ["1"]
    assert setup.index.unembedded(limit=10) == ["1"]
    assert setup.index.orphans(limit=10) == []
    setup.delete(JournalEntry, "3")  # pruned: its vector is an orphan now
    assert setup.index.orphans(limit=10) == ["3"]
    assert setup.index.rank(unit_vector(0, 3), ["3"], limit=5, threshold=-1).unembedded == ["3"]


def test_another_process_writes_are_seen(backend_url: str) -> None:
    here, there = open_setup(backend_url), open_setup(backend_url)
    try:
        here.write(entry("1"), entry("4"), vector_record("1"))
        first = here.index.rank(unit_vector(0), ["1", "4"], limit=5, threshold=0.5)
        assert [h.key for h in first.hits] == ["1"]
        there.cache.refresh_if_stale()
        there.write(vector_record("4"))
        here.cache.refresh_if_stale()
        ranked = here.index.rank(unit_vector(0), ["1", "4"], limit=5, threshold=0.5)
        assert [h.key for h in ranked.hits] == ["1", "4"]
        assert here.index.unembedded(limit=5) == []
    finally:
        here.store.close()
        there.store.close()


@given(
    scores=st.lists(
        st.sampled_from([np.nan, -0.5, 0.0, 0.1, 0.25, 0.5, 0.9, 1.0]), min_size=0, max_size=40
    ),
    limit=st.integers(min_value=0, max_value=45),
    threshold=st.sampled_from([-1.0, 0.0, 0.25, 0.6]),
)
def test_ranking_is_a_stable_sort_of_the_matches(
    scores: list[float], limit: int, threshold: float
) -> None:
    keys = [f"k{i}" for i in range(len(scores))]
    hits, total = rank_candidates(
        keys, np.array(scores, dtype=np.float32), limit=limit, threshold=threshold
    )
    matches = [(k, s) for k, s in zip(keys, scores, strict=True) if s >= threshold]
    expected = sorted(matches, key=lambda m: -m[1])[:limit]  # sorted() is stable
    assert total == len(matches)
    assert [(h.key, h.score) for h in hits] == [(k, pytest.approx(s)) for k, s in expected]
