"""An inverted file over the int8 rows: the night's link candidates without a full pass.

Why: A-MEM linking asks, for each memory, its few neighbours above a high cosine
threshold. The exact way (:meth:`QuantizedMatrix.scores_many`) reads every row for every
batch, so linking a store of N memories costs O(N²) and a dreaming tick grows with the
store. Here the rows are split into about √N cells by spherical k-means (trained once on
a sample); each cell keeps its own rows' int8 codes contiguously, so a query is scored
against the centroids and then, one kernel call per cell, against the rows of the
``probes`` cells nearest to it: O(√N) rows instead of N, and no gather of scattered rows
(gathering them was what made an earlier attempt slower than the exact pass; see
bench/RESULTS.md, "Linking that does not grow with the store").

The cells are built lazily from the matrix and kept in step by catching up on the rows
appended since the last call (rows are never rewritten: the index appends a new row for
an edited memory and masks the old one), so nothing here listens to commits. When the
rows have grown fourfold since training the cells are trained again, so the work per
row stays amortised O(1). Deleted rows stay in their cell and are masked by the caller.
The codes are a second copy of the matrix's (about 0.4 KB a memory), built only when a
caller needs neighbours (the night's linking and deduplication), never for recall.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from mindspace.memory.quantized import QuantizedMatrix, dots, quantize

_kernels: Any
try:  # pragma: no cover - exercised by whichever branch the install has
    import numkong as _kernels
except ImportError:  # pragma: no cover
    _kernels = None

__all__ = ["CellIndex"]

_TRAIN_ITERATIONS = 12
_SAMPLE_PER_CELL = 96
"""Rows sampled per cell for training (k-means on a sample: the centroids need no more).

48 rows and 8 rounds left the cells lopsided (at 100k the largest held 5.5x the median
and a query read 23% of the rows through 12 of 105 cells); 96 and 12 give rounder
cells that find as many links from 19% of the rows (bench/RESULTS.md, "Balanced cells,
round 4"), for 0.47 s of training at 100k instead of 0.25 s."""
_PROBES = 18
"""Cells a query probes (or a fifteenth of them, past 270 cells: about 290k rows).

A fixed number keeps a query's rows O(√N): 19% of the rows at 100k (158 cells), 30% at
33k (91 cells)."""


class _Cell:
    """The rows of one cell: their row numbers, int8 codes and scales, contiguous."""

    __slots__ = ("codes", "rows", "scale", "size")

    def __init__(self, dim: int, capacity: int) -> None:
        capacity = max(capacity, 8)
        self.codes: npt.NDArray[np.int8] = np.zeros((capacity, dim), dtype=np.int8)
        self.scale: npt.NDArray[np.float32] = np.zeros(capacity, dtype=np.float32)
        self.rows: npt.NDArray[np.int64] = np.zeros(capacity, dtype=np.int64)
        self.size = 0

    def extend(
        self,
        rows: npt.NDArray[np.int64],
        codes: npt.NDArray[np.int8],
        scale: npt.NDArray[np.float32],
    ) -> None:
        end = self.size + rows.shape[0]
        if end > self.rows.shape[0]:
            # A quarter more, not double: the cells are a second copy of the codes, and
            # every cell's slack would add up to the whole matrix again.
            grown = max(end, self.rows.shape[0] + self.rows.shape[0] // 4)
            codes_now = np.zeros((grown, self.codes.shape[1]), dtype=np.int8)
            codes_now[: self.size] = self.codes[: self.size]
            scale_now = np.zeros(grown, dtype=np.float32)
            scale_now[: self.size] = self.scale[: self.size]
            rows_now = np.zeros(grown, dtype=np.int64)
            rows_now[: self.size] = self.rows[: self.size]
            self.codes, self.scale, self.rows = codes_now, scale_now, rows_now
        self.codes[self.size : end] = codes
        self.scale[self.size : end] = scale
        self.rows[self.size : end] = rows
        self.size = end


class CellIndex:
    """Approximate neighbours among the rows of a :class:`QuantizedMatrix`.

    Args:
        matrix: The rows (read, never written).
        probes: Cells searched per query (None: 18, or a fifteenth of the cells if more).
        seed: The training sample's seed (the same store always gets the same cells).
        spread: The cells are about √rows / ``spread`` (158 at 100k rows).
    """

    def __init__(
        self,
        matrix: QuantizedMatrix,
        probes: int | None = None,
        seed: int = 0,
        *,
        spread: float = 2.0,
    ) -> None:
        self._matrix = matrix
        self._spread = spread
        self._probes = probes
        self._seed = seed
        self._cells: list[_Cell] = []
        self._centroids: QuantizedMatrix | None = None
        self._covered = 0
        self._trained_on = 0

    @property
    def cells(self) -> int:
        """How many cells (0 before the first call)."""
        return len(self._cells)

    @property
    def probes(self) -> int:
        """How many cells a query searches."""
        if self._probes is not None:
            return min(self._probes, len(self._cells))
        return min(len(self._cells), max(_PROBES, len(self._cells) // 15))

    def sizes(self) -> list[int]:
        """How many rows each cell holds (dead rows included)."""
        return [cell.size for cell in self._cells]

    @property
    def nbytes(self) -> int:
        """Bytes held by the cells and centroids (capacity included)."""
        held = sum(c.codes.nbytes + c.scale.nbytes + c.rows.nbytes for c in self._cells)
        return held + (self._centroids.nbytes if self._centroids is not None else 0)

    def sync(self) -> None:
        """Bring the cells up to the matrix: train when needed, then file the new rows."""
        rows = self._matrix.rows
        if rows < self._covered:  # the matrix was rebuilt under us
            self._covered = self._trained_on = 0
        if not self._trained_on or rows >= 4 * self._trained_on:
            self._train(rows)
        if rows > self._covered:
            self._file(self._covered, rows)

    def _train(self, rows: int) -> None:
        """Spherical k-means on a sample of the rows; empties the cells."""
        count = max(1, round(math.sqrt(rows) / self._spread))
        rng = np.random.default_rng(self._seed)
        size = min(rows, count * _SAMPLE_PER_CELL)
        sample = np.sort(rng.choice(rows, size=size, replace=False))
        vectors = self._matrix.dense(sample)
        norms = np.linalg.norm(vectors, axis=1)
        vectors = vectors[norms > 0] / norms[norms > 0, None]
        if not vectors.shape[0]:
            vectors = np.zeros((1, self._matrix.dim), dtype=np.float32)
        count = min(count, vectors.shape[0])
        centroids = vectors[rng.choice(vectors.shape[0], size=count, replace=False)]
        v_codes, _ = quantize(vectors)  # a row's scale does not change its nearest centroid
        for _ in range(_TRAIN_ITERATIONS):
            nearest = _nearest_centroid(v_codes, centroids)
            # Each cell's sum of its rows by one sort (np.add.at was half the training).
            order = np.argsort(nearest, kind="stable")
            starts = np.searchsorted(nearest[order], np.arange(count))
            filled = np.flatnonzero(np.diff(np.append(starts, order.size)) > 0)
            sums = np.zeros_like(centroids)
            sums[filled] = np.add.reduceat(vectors[order], starts[filled], axis=0)
            lengths = np.linalg.norm(sums, axis=1)
            # An empty cell keeps its centroid (it may still attract rows later).
            moved = lengths > 0
            centroids[moved] = sums[moved] / lengths[moved, None]
        self._centroids = QuantizedMatrix(self._matrix.dim)
        self._centroids.set_many(0, centroids.astype(np.float32))
        # Cells start small and grow as rows are filed (a quarter at a time), so the
        # codes are held about once more, not once per expected cell size.
        self._cells = [_Cell(self._matrix.dim, 8) for _ in range(count)]
        self._covered = 0
        self._trained_on = rows

    def _file(self, start: int, end: int) -> None:
        """Put rows ``start:end`` in the cells of their nearest centroids."""
        assert self._centroids is not None
        for at in range(start, end, 8192):
            stop = min(end, at + 8192)
            codes, scale = self._matrix.block(at, stop)
            # The stored int8 rows against the centroids (one kernel call): the cell a
            # query of the same vector probes first. Scales only matter per centroid.
            c_codes, c_scale = self._centroids.block(0, self._centroids.rows)
            nearest = np.argmax(dots(codes, c_codes) * c_scale[None, :], axis=1)
            order = np.argsort(nearest, kind="stable")
            bounds = np.searchsorted(nearest[order], np.arange(len(self._cells) + 1))
            for cell, (lo, hi) in enumerate(itertools.pairwise(bounds)):
                if hi > lo:
                    picked = order[lo:hi]
                    self._cells[cell].extend(picked + at, codes[picked], scale[picked])
        self._covered = end

    def _probe(
        self, batch: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """(cell, query) pairs to score, ordered by cell: each query's nearest cells."""
        assert self._centroids is not None
        probes = self.probes
        near = self._centroids.scores_many(batch)  # (queries, cells)
        if probes < near.shape[1]:
            chosen = np.argpartition(-near, probes - 1, axis=1)[:, :probes]
        else:
            chosen = np.broadcast_to(np.arange(near.shape[1]), near.shape)
        order = np.argsort(chosen, axis=None, kind="stable")
        return chosen.ravel()[order], order // chosen.shape[1]

    def candidates(
        self,
        queries: npt.NDArray[np.float32],
        threshold: float,
        *,
        best: int | None = None,
        usable: npt.NDArray[np.bool_] | None = None,
    ) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
        """For each query, the rows of its probed cells scoring >= ``threshold``.

        Args:
            queries: The query vectors, one a row.
            threshold: The least score (-inf: every row of the probed cells).
            best: Keep only each query's ``best`` highest-scoring rows, best first and
                ties to the lower row (None: all, unsorted). A link query at 0.7 passes
                ~1,500 rows of a 100k hashing-embedder store; sorting them all per query
                cost more than finding them.
            usable: Rows that may be returned (by row number; None: all, dead included).

        Returns:
            Per query, the row numbers and their scores.
        """
        self.sync()
        assert self._centroids is not None
        batch = np.atleast_2d(np.asarray(queries, dtype=np.float32))
        cells_flat, queries_flat = self._probe(batch)
        q_codes, q_scale = quantize(batch)
        # Each cell once, against the queries that probe it: one kernel call per cell.
        bounds = np.flatnonzero(np.diff(cells_flat)) + 1
        found_rows: list[npt.NDArray[np.int64]] = []
        found_queries: list[npt.NDArray[np.int64]] = []
        found_scores: list[npt.NDArray[np.float32]] = []
        limit = np.float32(threshold)
        # A row's score is (dot * row scale) * query scale, as in the exact pass. The
        # first filter compares (dot * row scale) with limit / query scale, one long row
        # per query (a short inner axis of a few queries made NumPy ~10x slower); the
        # few survivors are then scored exactly as the exact pass scores them.
        with np.errstate(divide="ignore", invalid="ignore"):
            exact = np.float64(limit) / q_scale.astype(np.float64)
            loose = (exact - np.abs(exact) * 1e-5).astype(np.float32)  # never stricter
        loose[q_scale == 0] = -np.inf if limit <= 0 else np.inf
        for lo, hi in zip(
            np.concatenate([[0], bounds]), np.concatenate([bounds, [cells_flat.size]]), strict=True
        ):
            cell = self._cells[int(cells_flat[lo])]
            if not cell.size:
                continue
            who = queries_flat[lo:hi]
            part = np.multiply(
                _int_dots(q_codes[who], cell.codes[: cell.size]),
                cell.scale[None, : cell.size],
                dtype=np.float32,
            )  # (queries, rows)
            hit = np.flatnonzero(part >= loose[who, None])
            if not hit.size:
                continue
            hit_queries, hit_rows = np.divmod(hit, cell.size)
            scores = part.ravel()[hit] * q_scale[who[hit_queries]]
            keep = scores >= limit
            found_rows.append(cell.rows[hit_rows[keep]])
            found_queries.append(who[hit_queries[keep]])
            found_scores.append(scores[keep])
        results: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]] = []
        if not found_rows:
            empty = (np.zeros(0, np.int64), np.zeros(0, np.float32))
            return [empty for _ in range(batch.shape[0])]
        owners = np.concatenate(found_queries)
        # At 0.7 a hashing-embedder query passes ~1,500 rows of 100k: grouping them by
        # query is a sort of ~200k keys a call, a radix sort when the keys are 16-bit.
        if batch.shape[0] <= np.iinfo(np.uint16).max:
            owners = owners.astype(np.uint16)
        split = np.argsort(owners, kind="stable")
        rows = np.concatenate(found_rows)[split]
        scores = np.concatenate(found_scores)[split]
        owners = owners[split]
        if usable is not None:
            alive = usable[rows]
            rows, scores, owners = rows[alive], scores[alive], owners[alive]
        edges = np.searchsorted(owners, np.arange(batch.shape[0] + 1)).tolist()
        for q in range(batch.shape[0]):  # views, not copies
            mine = (rows[edges[q] : edges[q + 1]], scores[edges[q] : edges[q + 1]])
            results.append(mine if best is None else _best(*mine, best))
        return results


def _best(
    rows: npt.NDArray[np.int64], scores: npt.NDArray[np.float32], best: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The ``best`` highest ``scores`` with their rows, best first, ties to the lower row."""
    if rows.size > best > 0:
        # Everything tied with the best-th score stays in, so that the sort below picks
        # the lower rows among the ties.
        kth = np.partition(scores, rows.size - best)[rows.size - best]
        tied = np.flatnonzero(scores >= kth)
        rows, scores = rows[tied], scores[tied]
    order = np.lexsort((rows, -scores))[: max(best, 0)]
    return rows[order], scores[order]


def _int_dots(queries: npt.NDArray[np.int8], codes: npt.NDArray[np.int8]) -> npt.NDArray[np.int32]:
    """``queries @ codes.T`` of int8 matrices as exact int32, shape (queries, rows).

    The kernel is called with the cell's rows as its long side and the result turned
    (a copy of a few queries' columns), so that what follows runs along the rows.
    """
    if _kernels is not None:
        packed = _kernels.dots_pack(np.ascontiguousarray(queries))
        by_row = np.asarray(_kernels.dots_packed(codes, packed))
        return np.ascontiguousarray(by_row.T)
    wide: npt.NDArray[np.int32] = queries.astype(np.int32) @ codes.T.astype(np.int32)
    return wide


def _nearest_centroid(
    v_codes: npt.NDArray[np.int8], centroids: npt.NDArray[np.float32]
) -> npt.NDArray[np.int64]:
    """Each vector's (given as int8 codes) most similar centroid, through the int8 kernels.

    A float32 product of this size spread over OpenBLAS threads cost ~30x more on a
    loaded two-core machine (bench/RESULTS.md).
    """
    c_codes, c_scale = quantize(centroids)
    found: npt.NDArray[np.int64] = np.argmax(dots(v_codes, c_codes) * c_scale[None, :], axis=1)
    return found
