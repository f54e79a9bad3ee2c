"""Linking that does not grow with the store: the cells of the embedded index, the lookahead.

The embedded index answers ``nearest`` exactly below ``cells_from`` rows and through its
cells (an inverted file, O(√N) rows a query) from there; these tests force the cells on
small stores and compare with the exact answer of a second index over the same store.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mindspace.clock import ManualClock
from mindspace.memory.cells import CellIndex
from mindspace.memory.index import MemoryIndex
from mindspace.memory.linking import UnlinkedMemories, run_dreaming_tick
from mindspace.memory.quantized import QuantizedMatrix
from mindspace.memory.records import Memory, MemoryLinks
from mindspace.state.unit import StateCache
from mindspace.storage import SqlStore

WHEN = "2025-12-06T10:00:00Z"
DIM = 32
THRESHOLD = 0.7


def clustered(count: int, seed: int) -> np.ndarray:
    """Unit vectors in 40 loose clusters, so many pairs pass the link threshold."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, DIM))
    rows = centres[rng.integers(0, 40, size=count)] + 0.45 * rng.normal(size=(count, DIM))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def memory(key: str, vector: np.ndarray | None) -> Memory:
    return Memory(
        id=key,
        content=f"memory {key}",
        created_at=WHEN,
        occurred_at=WHEN,
        embedder="hand",
        embedding=None if vector is None else vector.tobytes(),
    )


class Store:
    def __init__(self, path: Path) -> None:
        self.store = SqlStore.from_path(path)
        info = self.store.open_assistant("keeper", create=True)
        self.cache = StateCache(self.store, info.id, info.revision)

    def write(self, *records: Memory) -> None:
        unit = self.cache.begin()
        for record in records:
            unit.put(record)
        self.cache.commit(unit)

    def delete(self, key: str) -> None:
        unit = self.cache.begin()
        unit.delete(Memory, key)
        self.cache.commit(unit)


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[tuple[Store, np.ndarray]]:
    opened = Store(tmp_path / "cells.db")
    rows = clustered(3000, seed=1)
    opened.write(*(memory(f"m{i}", v) for i, v in enumerate(rows)))
    yield opened, rows
    opened.store.close()


def links(index: MemoryIndex, vectors: np.ndarray, keys: list[str]) -> list[set[str]]:
    found = index.nearest(vectors, k=5, threshold=THRESHOLD, exclude=keys)
    return [{n.key for n in near} for near in found]


def test_cells_find_the_exact_links_within_the_stated_recall(
    filled: tuple[Store, np.ndarray],
) -> None:
    opened, rows = filled
    cells = MemoryIndex(opened.cache, "hand", cells_from=0)
    exact = MemoryIndex(opened.cache, "hand", cells_from=2**62)
    keys = [f"m{i}" for i in range(0, 3000, 5)]
    approx = links(cells, rows[::5], keys)
    truth = links(exact, rows[::5], keys)
    wanted = sum(len(t) for t in truth)
    assert wanted > 1000  # the clusters make links to find
    recall = sum(len(a & t) for a, t in zip(approx, truth, strict=True)) / wanted
    assert recall >= 0.95
    assert all(a <= {f"m{i}" for i in range(3000)} for a in approx)
    assert not any(k in a for k, a in zip(keys, approx, strict=True))  # never itself


def test_cells_see_memories_written_and_deleted_after_they_were_built(
    filled: tuple[Store, np.ndarray],
) -> None:
    opened, rows = filled
    cells = MemoryIndex(opened.cache, "hand", cells_from=0)
    before = links(cells, rows[:1], ["m0"])[0]
    twin = rows[0] + 0.01 * clustered(1, seed=9)[0]
    opened.write(memory("twin", twin / np.linalg.norm(twin)))
    after = cells.nearest(rows[:1], k=5, threshold=THRESHOLD, exclude=["m0"])[0]
    assert after[0].key == "twin"  # appended after the cells were trained: found first
    assert after[0].score > 0.99
    opened.delete("twin")
    assert links(cells, rows[:1], ["m0"])[0] == before


def tick_until_linked(opened: Store, index: MemoryIndex, batch: int) -> dict[str, set[str]]:
    unlinked = UnlinkedMemories(opened.cache)
    clock = ManualClock()
    while len(unlinked):
        unit = opened.cache.begin()
        run_dreaming_tick(unit, clock, index, THRESHOLD, unlinked, batch)
        opened.cache.commit(unit)
    unit = opened.cache.begin()
    made = unit.get_many(MemoryLinks, [f"m{i}" for i in range(3000)])
    return {key: {link.id for link in record.linked_to} for key, record in made.items()}


def test_ticks_that_look_ahead_make_the_links_each_memory_would_get_alone(
    filled: tuple[Store, np.ndarray],
) -> None:
    opened, rows = filled
    exact = MemoryIndex(opened.cache, "hand", cells_from=2**62)
    cells = MemoryIndex(opened.cache, "hand", cells_from=0)
    links(cells, rows[:1], ["m0"])
    assert cells.cells_nbytes > rows.shape[0] * DIM  # a second copy of the codes
    made = tick_until_linked(opened, cells, batch=5)
    assert cells.cells_nbytes == 0  # dropped once every memory is linked
    opened.delete("m0")  # forget the links made through the cells: link again, exactly
    unit = opened.cache.begin()
    for key in made:
        unit.delete(MemoryLinks, key)
    opened.cache.commit(unit)
    opened.write(memory("m0", rows[0]))
    made = tick_until_linked(opened, exact, batch=5)
    keys = [f"m{i}" for i in range(3000)]
    assert made == dict(zip(keys, links(exact, rows, keys), strict=True))


def test_a_memory_written_between_ticks_is_linked_by_the_memories_looked_up_before(
    filled: tuple[Store, np.ndarray],
) -> None:
    opened, rows = filled
    index = MemoryIndex(opened.cache, "hand")
    unlinked = UnlinkedMemories(opened.cache)
    clock = ManualClock()
    for _ in range(3):  # the lookahead now holds m15..m34's neighbours
        unit = opened.cache.begin()
        run_dreaming_tick(unit, clock, index, THRESHOLD, unlinked, 5)
        opened.cache.commit(unit)
    assert unlinked.head(1) == ["m15"]
    opened.write(memory("late", rows[20]))  # m20's twin, written after its lookup
    unit = opened.cache.begin()
    for _ in range(2):
        run_dreaming_tick(unit, clock, index, THRESHOLD, unlinked, 5)
        opened.cache.commit(unit)
        unit = opened.cache.begin()
    record = unit.get(MemoryLinks, "m20")
    assert record is not None
    assert record.linked_to[0].id == "late"


def test_probing_every_cell_is_the_exact_pass_and_fewer_cells_lose_few_links() -> None:
    rows = clustered(4000, seed=3)
    matrix = QuantizedMatrix(DIM)
    matrix.set_many(0, rows)
    queries = rows[::10]
    exact = matrix.scores_many(queries)
    truth = [set(np.flatnonzero(s >= THRESHOLD).tolist()) for s in exact]
    every = CellIndex(matrix, probes=10**6)
    found = every.candidates(queries, THRESHOLD)
    assert every.cells == 32  # about √4000 / 2
    assert [set(r.tolist()) for r, _ in found] == truth
    assert all(np.allclose(s, exact[i, r]) for i, (r, s) in enumerate(found))
    few = CellIndex(matrix, probes=11)  # a third of the cells
    near = [set(r.tolist()) for r, _ in few.candidates(queries, THRESHOLD)]
    wanted = sum(len(t) for t in truth)
    assert sum(len(n & t) for n, t in zip(near, truth, strict=True)) / wanted >= 0.9
    assert all(n <= t for n, t in zip(near, truth, strict=True))  # never a false link


def test_a_threshold_at_or_below_zero_returns_every_row_of_the_probed_cells() -> None:
    """Recall's dense pass asks for every row of the probed cells (a threshold of -inf)."""
    rows = clustered(2000, seed=5)
    rows[7] = 0.0  # a memory without a vector is a zero row: score 0
    matrix = QuantizedMatrix(DIM)
    matrix.set_many(0, rows)
    queries = rows[1:40:3]
    exact = matrix.scores_many(queries)
    every = CellIndex(matrix, probes=10**6)
    for threshold in (-np.inf, -0.2, 0.0):
        found = every.candidates(queries, threshold)
        for i, (got, scores) in enumerate(found):
            expected = np.flatnonzero(exact[i] >= threshold)
            assert sorted(got.tolist()) == expected.tolist()
            assert np.allclose(scores, exact[i, got])
    assert all(7 not in got for got, _ in every.candidates(queries, 0.01))
    few = CellIndex(matrix, probes=3)
    for got, _ in few.candidates(queries, -np.inf):  # whole cells, never a row twice
        assert len(set(got.tolist())) == got.size
        assert 0 < got.size < 2000


def test_the_best_usable_rows_are_those_of_the_whole_answer_best_first() -> None:
    """``best`` and ``usable`` give what a caller would keep of the full answer itself."""
    rows = clustered(3000, seed=6)
    rows[100:110] = rows[50]  # identical rows: ties, which go to the lower row
    matrix = QuantizedMatrix(DIM)
    matrix.set_many(0, rows)
    usable = np.ones(3000, dtype=bool)
    usable[::7] = False  # deleted memories, or rows without a vector (105 among them)
    usable[101] = False
    queries = rows[[50, *range(0, 3000, 37)]]
    index = CellIndex(matrix, probes=12)
    whole = index.candidates(queries, THRESHOLD)
    kept = index.candidates(queries, THRESHOLD, best=6, usable=usable)
    for (all_rows, all_scores), (got, scores) in zip(whole, kept, strict=True):
        alive = usable[all_rows]
        all_rows, all_scores = all_rows[alive], all_scores[alive]
        order = np.lexsort((all_rows, -all_scores))[:6]
        assert got.tolist() == all_rows[order].tolist()
        assert scores.tolist() == all_scores[order].tolist()
    assert kept[0][0].tolist() == [50, 100, 102, 103, 104, 106]  # 101, 105: not usable
    assert sum(len(r) for r, _ in whole) > 10 * sum(len(r) for r, _ in kept)
