"""An inverted file over the memory index's int8 rows: the night's link candidates in O(√N).

Why: A-MEM linking asks, for every memory of the store, its nearest neighbours. An
exact pass over N rows per batch made linking a whole store quadratic (215 s of CPU at
100k memories) and a linking tick ten times dearer at 100k than at 10k. Here the rows
are grouped into ``nlist ≈ √N`` cells around centroids (spherical k-means on a sample);
a query scores the centroids, then only the rows of its ``nprobe`` best cells: about
``√N + nprobe·√N`` dot products instead of N.

The index follows the rows as they come (the memory index only ever appends rows; a
changed memory is a dead row plus a new one): new rows are assigned to their cell on
the next query, one matrix product for the lot, and the centroids are trained again
when the rows have grown :data:`GROWTH` times since the last training (so training
costs O(1) amortised per row). Below :data:`MIN_ROWS` rows nothing is built and callers
search exactly. Search here is approximate: a neighbour whose cell is not probed is
missed (``bench/link_store.py`` reports the links found against the exact pass).

No dependency: NumPy for the centroids, the matrix's own int8 kernels for the rows.
(hnswlib would give O(log N) but ships only as source to compile; PostgreSQL already
uses pgvector's HNSW for the same question.)
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from mindspace.memory.quantized import QuantizedMatrix

__all__ = ["GROWTH", "MIN_ROWS", "CellIndex"]

MIN_ROWS = 20_000
"""Rows with a vector below which no cells are built: an exact pass over 20k rows costs
about what the cells of a batch cost, and finds every neighbour."""

GROWTH = 4
"""The centroids are trained again when the rows grow this many times since the last."""

NPROBE = 16
"""Cells each query looks into. On the hashing embedder's vectors of 12-word texts (an
unkind case: bag-of-words cells are uneven) it finds 0.95 of the exact pass's links at
100k memories, scoring 12% of the rows per query."""

_TRAIN_ITERATIONS = 8
_SAMPLE_PER_CELL = 40
_CHUNK = 8192


class _Cell:
    """The rows of one cell, a growable int64 array."""

    __slots__ = ("rows", "size")

    def __init__(self) -> None:
        self.rows: npt.NDArray[np.int64] = np.zeros(8, dtype=np.int64)
        self.size = 0

    def extend(self, rows: npt.NDArray[np.int64]) -> None:
        needed = self.size + rows.shape[0]
        if needed > self.rows.shape[0]:
            grown = np.zeros(max(needed, 2 * self.rows.shape[0]), dtype=np.int64)
            grown[: self.size] = self.rows[: self.size]
            self.rows = grown
        self.rows[self.size : needed] = rows
        self.size = needed

    def view(self) -> npt.NDArray[np.int64]:
        return self.rows[: self.size]


class CellIndex:
    """Cells over the rows of a :class:`QuantizedMatrix` (see the module docstring).

    Args:
        seed: The k-means sample's random seed (the same rows give the same cells).
    """

    def __init__(self, seed: int = 0) -> None:
        self._seed = seed
        self._centroids: npt.NDArray[np.float32] | None = None
        self._probe: QuantizedMatrix | None = None
        self._cells: list[_Cell] = []
        self._trained_rows = 0
        self._assigned = 0

    @property
    def cells(self) -> int:
        """How many cells there are (0: not built)."""
        return len(self._cells)

    def sync(self, matrix: QuantizedMatrix, has_vector: npt.NDArray[np.bool_]) -> bool:
        """Bring the cells up to ``matrix``'s rows; returns whether they can be searched."""
        rows = matrix.rows
        with_vector = np.flatnonzero(has_vector[:rows])
        if self._centroids is None or rows > GROWTH * self._trained_rows:
            if with_vector.shape[0] < MIN_ROWS:
                return False
            self._train(matrix, with_vector)
            self._trained_rows = rows
            self._assigned = 0
            self._cells = [_Cell() for _ in range(self._centroids_or_fail().shape[0])]
        if self._assigned < rows:
            fresh = with_vector[with_vector >= self._assigned]
            self._assign(matrix, fresh)
            self._assigned = rows
        return True

    def probe(
        self, queries: npt.NDArray[np.float32], nprobe: int = NPROBE
    ) -> npt.NDArray[np.int64]:
        """The rows of the ``nprobe`` nearest cells of any of ``queries`` (each row once).

        A batch is scored against the union of its queries' cells in one kernel pass;
        a query scored against another's cells too only finds more.
        """
        if self._probe is None:
            raise RuntimeError("CellIndex.sync() first: no cells are built")
        # The int8 kernels, not a float32 BLAS product: OpenBLAS spreads even a 32 x 384
        # x 300 product over its threads, which on a busy machine costs 30x its work.
        sims = self._probe.scores_many(queries)
        take = min(nprobe, self._probe.rows)
        best = np.unique(np.argpartition(-sims, take - 1, axis=1)[:, :take])
        return np.concatenate([self._cells[int(c)].view() for c in best])

    def _centroids_or_fail(self) -> npt.NDArray[np.float32]:
        if self._centroids is None:
            raise RuntimeError("CellIndex.sync() first: no cells are built")
        return self._centroids

    def _train(self, matrix: QuantizedMatrix, with_vector: npt.NDArray[np.int64]) -> None:
        """Spherical k-means on a sample of the rows: ``√rows`` centroids."""
        count = math.isqrt(with_vector.shape[0])
        rng = np.random.default_rng(self._seed)
        size = min(with_vector.shape[0], count * _SAMPLE_PER_CELL)
        sample = _unit(matrix.dequantize(rng.choice(with_vector, size, replace=False)))
        centroids = sample[rng.choice(size, count, replace=False)].copy()
        for _ in range(_TRAIN_ITERATIONS):
            nearest = np.argmax(sample @ centroids.T, axis=1)
            sums = np.zeros_like(centroids)
            np.add.at(sums, nearest, sample)
            empty = ~np.any(sums != 0, axis=1)
            sums[empty] = sample[rng.choice(size, int(empty.sum()), replace=True)]
            centroids = _unit(sums)
        self._centroids = centroids
        self._probe = QuantizedMatrix(centroids.shape[1])
        self._probe.set_many(0, centroids)

    def _assign(self, matrix: QuantizedMatrix, rows: npt.NDArray[np.int64]) -> None:
        centroids = self._centroids_or_fail()
        for start in range(0, rows.shape[0], _CHUNK):
            chunk = rows[start : start + _CHUNK]
            nearest = np.argmax(matrix.dequantize(chunk) @ centroids.T, axis=1)
            order = np.argsort(nearest, kind="stable")
            cells, starts = np.unique(nearest[order], return_index=True)
            for cell, members in zip(cells, np.split(chunk[order], starts[1:]), strict=True):
                self._cells[int(cell)].extend(members)


def _unit(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: npt.NDArray[np.float32] = (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return out
