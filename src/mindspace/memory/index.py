"""The in-process search index of one assistant's semantic memories.

Dense vectors live in one int8 matrix (:mod:`mindspace.memory.quantized`), scored
exactly below :data:`CELLS_FROM` rows and from there on the rows of the cells a query
probes (:mod:`mindspace.memory.cells`, :mod:`mindspace.memory.scoring`); BM25 postings
live beside it in the same row space, and a query blends the two by standardised
scores; metadata
filters (minimum source trust, required tags) become boolean masks. The index is a
:class:`~mindspace.state.committed.CacheListener`: every committed write or delete of a
memory is applied in place, so it never drifts from the store. Deleted rows are masked
and the arrays are compacted when more than half of them are dead.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from mindspace.memory.cells import CellIndex
from mindspace.memory.lexical import LexicalIndex
from mindspace.memory.quantized import QuantizedMatrix
from mindspace.memory.records import Memory
from mindspace.memory.rows import IndexedMemory, neighbours
from mindspace.memory.scoring import Scored, best_rows, every_row, from_cells
from mindspace.state.models import Record
from mindspace.state.semantic import Hit, Neighbour, Rankings, SearchRequest
from mindspace.state.unit import StateCache

__all__ = ["Hit", "MemoryIndex", "rrf"]

CELLS_FROM = 32_768
"""Rows from which :meth:`MemoryIndex.nearest` and the dense side of a search score the
rows of the probed cells rather than every row.

Below it one exact int8 pass over the matrix is cheaper than probing cells (measured
in bench/RESULTS.md, "Linking that does not grow with the store"), and a search is exact."""

RRF_K = 60
"""Reciprocal-rank-fusion constant (Cormack et al. 2009)."""


def rrf(
    rankings: Sequence[Sequence[str]], weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Reciprocal rank fusion of several rankings (best first)."""
    fused: dict[str, float] = {}
    for index, ranking in enumerate(rankings):
        weight = weights[index] if weights else 1.0
        for rank, key in enumerate(ranking):
            fused[key] = fused.get(key, 0.0) + weight / (RRF_K + rank + 1)
    return fused


class _Column:
    """A growable 1-D NumPy column (amortised O(1) appends, views without copies)."""

    def __init__(self, dtype: Any) -> None:
        self._data: npt.NDArray[Any] = np.zeros(16, dtype=dtype)
        self._size = 0

    @property
    def nbytes(self) -> int:
        return int(self._data.nbytes)

    def append(self, value: Any) -> None:
        if self._size == self._data.shape[0]:
            grown = np.zeros(2 * self._size, dtype=self._data.dtype)
            grown[: self._size] = self._data
            self._data = grown
        self._data[self._size] = value
        self._size += 1

    def set(self, at: int, value: Any) -> None:
        self._data[at] = value

    def view(self) -> npt.NDArray[Any]:
        return self._data[: self._size]


class MemoryIndex:
    """Dense + lexical index over the committed memories of one assistant.

    Args:
        cache: The assistant's state cache (the index listens to it).
        embedder: The name of the embedder queries use; vectors made by another
            embedder are not comparable and are left out of dense search (they stay
            searchable lexically). None accepts any vector of the matching size.

    The index is built on first use by streaming, from the cache's store, only the
    fields it needs (never whole records: memories are a lazy kind).
    """

    def __init__(
        self, cache: StateCache, embedder: str | None = None, *, cells_from: int = CELLS_FROM
    ) -> None:
        self._cache = cache
        self.embedder = embedder
        self.cells_from = cells_from
        self._built = False
        cache.listen(Memory.kind, self)
        self._clear()

    def _clear(self) -> None:
        self.keys: list[str] = []
        self._row_of: dict[str, int] = {}
        self._dim: int | None = None
        self._matrix: QuantizedMatrix | None = None
        self._cells: CellIndex | None = None
        self._has_vector = _Column(np.bool_)
        self._alive = _Column(np.bool_)
        self._trust = _Column(np.float32)
        self._occurred = _Column(np.float64)
        self._entities: list[str] = []
        self._tags: dict[str, set[int]] = {}
        self._lexical = LexicalIndex()
        self._dead = 0

    # -- CacheListener -------------------------------------------------------------------
    def applied(self, key: str, record: Record | None) -> None:
        """Apply one committed write (None: a delete)."""
        if not self._built:
            return  # built from the store on first use, which already holds this write
        self._remove(key)
        if isinstance(record, Memory):
            self._add(IndexedMemory.of(record))
        self._maybe_compact()

    def reset(self) -> None:
        """The cache was reloaded: rebuild on next use."""
        self._built = False
        self._clear()

    # -- building ------------------------------------------------------------------------
    def ensure(self) -> None:
        """Build from the committed memories if not built yet."""
        if self._built:
            return
        self._clear()
        scan = self._cache.store.scan(self._cache.assistant_id, Memory.kind, IndexedMemory.FIELDS)
        rows = (IndexedMemory.from_stored(stored) for stored in scan)
        batch: list[IndexedMemory] = []
        for row in rows:
            batch.append(row)
            if len(batch) == 2_000:
                self._add_many(batch)
                batch = []
        self._add_many(batch)
        self._built = True

    def _add_many(self, rows: Sequence[IndexedMemory]) -> None:
        """Add rows with one quantisation pass for their vectors."""
        start = len(self.keys)
        vectors = [self._usable(row) for row in rows]
        for row, vector in zip(rows, vectors, strict=True):
            self._add(row, vector, quantize=False)
        if self._matrix is not None and rows:
            dense = np.zeros((len(rows), self._matrix.dim), dtype=np.float32)
            for offset, vector in enumerate(vectors):
                if vector is not None:
                    dense[offset] = vector
            self._matrix.set_many(start, dense)

    def _usable(self, row: IndexedMemory) -> npt.NDArray[np.float32] | None:
        vector = row.vector_by(self.embedder)
        if vector is None:
            return None
        if self._dim is None:
            self._dim = int(vector.shape[0])
            self._matrix = QuantizedMatrix(self._dim)
            # Rows added before the first usable vector stay zero rows (has_vector False):
            # the matrix is zero-filled and the first write past them extends it.
        return vector if vector.shape[0] == self._dim else None

    def _add(
        self,
        row: IndexedMemory,
        vector: npt.NDArray[np.float32] | None = None,
        *,
        quantize: bool = True,
    ) -> None:
        at = len(self.keys)
        self.keys.append(row.key)
        self._row_of[row.key] = at
        self._alive.append(True)
        self._trust.append(row.trust)
        self._occurred.append(row.occurred)
        self._entities.append(sys.intern(row.entity))
        for tag in row.tags:
            self._tags.setdefault(tag.casefold(), set()).add(at)
        self._lexical.add(row.key, row.lexical)
        if quantize:
            vector = self._usable(row)
            if self._matrix is not None:
                self._matrix.set(at, vector)
        self._has_vector.append(vector is not None)

    def _remove(self, key: str) -> None:
        row = self._row_of.pop(key, None)
        if row is None:
            return
        self._alive.set(row, False)
        self._lexical.remove(key)
        self._dead += 1

    def _maybe_compact(self) -> None:
        if self._dead > 64 and self._dead * 2 > len(self.keys):
            self._built = False
            self.ensure()

    def release_cells(self) -> None:
        """Drop the cells of :meth:`nearest` (rebuilt by the next call that needs them).

        They are a second copy of the int8 codes (~43 MB at 100k memories); the night
        drops them once every memory is linked.
        """
        self._cells = None

    @property
    def approximate(self) -> bool:
        """Whether a search now scores the dense side through the cells (see ``_scored``).

        Recall reads fewer candidates then (``APPROXIMATE_CANDIDATES`` in memory/semantic.py).
        """
        matrix = self._matrix
        return self._cells is not None and matrix is not None and matrix.rows >= self.cells_from

    @property
    def cells_nbytes(self) -> int:
        """Bytes held by the cells of :meth:`nearest` (0 while none are built)."""
        return self._cells.nbytes if self._cells is not None else 0

    @property
    def nbytes(self) -> int:
        """Bytes held in arrays (vectors, columns and BM25 postings; not Python objects)."""
        columns = (self._alive, self._has_vector, self._trust, self._occurred)
        matrix = self._matrix.nbytes if self._matrix is not None else 0
        return matrix + sum(c.nbytes for c in columns) + self._lexical.nbytes

    # -- queries -------------------------------------------------------------------------
    def __len__(self) -> int:
        self.ensure()
        return len(self._row_of)

    def count(self) -> int:
        """How many memories are indexed."""
        return len(self)

    def nearest(
        self,
        vectors: npt.NDArray[np.float32],
        *,
        k: int,
        threshold: float,
        exclude: Sequence[str],
    ) -> list[list[Neighbour]]:
        """For each row of ``vectors``, up to ``k`` memories with similarity >= ``threshold``.

        Below :attr:`cells_from` rows the batch is scored exactly (one int8 kernel pass
        over the matrix per 32 queries). From there the rows' cells are searched
        (:class:`~mindspace.memory.cells.CellIndex`, O(√N) rows a query): approximate,
        measured to find 0.97 of the exact links at 100k. Scores are the quantised dot
        products either way (within ~0.003 of float32).
        """
        self.ensure()
        batch = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        results: list[list[Neighbour]] = [[] for _ in range(batch.shape[0])]
        if self._matrix is None or batch.shape[1] != self._dim or not len(self.keys):
            return results
        usable = self._alive.view() & self._has_vector.view()
        owns = [
            self._row_of.get(exclude[i], -1) if i < len(exclude) else -1 for i in range(len(batch))
        ]
        if self._matrix.rows >= self.cells_from:
            if self._cells is None:
                self._cells = CellIndex(self._matrix)
            # Each query's best k + 1 usable rows, best first and ties to the older row, as
            # exact (its own row may be among them).
            found = self._cells.candidates(batch, threshold, best=k + 1, usable=usable)
            for i, (rows, scores) in enumerate(found):
                keep = rows != owns[i]
                rows, scores = rows[keep][:k], scores[keep][:k]
                ranked = zip(rows.tolist(), scores.tolist(), strict=True)
                pairs = ((self.keys[r], s) for r, s in ranked)
                results[i] = neighbours(pairs, k=k, threshold=-math.inf)
            return results
        for start in range(0, batch.shape[0], 32):
            sims = self._matrix.scores_many(batch[start : start + 32])
            sims[:, ~usable] = -np.inf
            for offset, row_scores in enumerate(sims):
                i = start + offset
                if owns[i] >= 0:
                    row_scores[owns[i]] = -np.inf
                keep = row_scores >= np.float32(threshold)
                top = self.top(row_scores, keep, k)
                results[i] = neighbours(
                    ((self.keys[r], float(row_scores[r])) for r in top), k=k, threshold=-math.inf
                )
        return results

    def mask(self, *, min_trust: float = 0.0, tags: Sequence[str] = ()) -> npt.NDArray[np.bool_]:
        """Rows that are alive, trusted enough and carry every tag in ``tags``."""
        self.ensure()
        keep = self._alive.view().copy()
        if min_trust > 0:
            keep &= self._trust.view() >= np.float32(min_trust)
        for tag in tags:
            rows = self._tags.get(tag.casefold(), set())
            tagged = np.zeros(len(self.keys), dtype=bool)
            if rows:
                tagged[np.fromiter(rows, dtype=np.int64)] = True
            keep &= tagged
        return keep

    def dense_scores(
        self, vector: npt.NDArray[np.float32] | None
    ) -> npt.NDArray[np.float32] | None:
        """Similarity of every row to ``vector`` (rows without a vector: -inf).

        The dot products of the int8 rows (within ~0.003 of float32 for unit vectors).
        """
        self.ensure()
        if vector is None or self._matrix is None or vector.shape[0] != self._dim:
            return None
        sims = self._matrix.scores(vector.astype(np.float32, copy=False))
        sims[~self._has_vector.view()] = -np.inf
        return sims

    def lexical_scores(self, query: str) -> npt.NDArray[np.float32]:
        """BM25 score of every row."""
        self.ensure()
        return self._lexical.scores(query)

    @property
    def occurred(self) -> npt.NDArray[np.float64]:
        """When each row's memory happened, as POSIX seconds."""
        return self._occurred.view()

    @property
    def entities(self) -> list[str]:
        """Each row's source entity, casefolded."""
        return self._entities

    def top(
        self, scores: npt.NDArray[np.floating], keep: npt.NDArray[np.bool_], k: int
    ) -> list[int]:
        """Rows of the ``k`` best scores among ``keep``, best first (exact)."""
        return [int(r) for r in best_rows(scores, keep, k)]

    def search(self, request: SearchRequest, *, limit: int) -> list[Hit]:
        """Hybrid search: dense and BM25 scores, standardised per query, then blended.

        Each signal is turned into z-scores over the eligible rows (so neither scale
        dominates) and mixed ``dense_weight : 1 - dense_weight``. Rows with no evidence
        at all (no shared term and no positive similarity) are left out. Without a query
        vector the ranking is BM25 alone.
        """
        return self._scored(request).ranked(request.dense_weight, limit)

    def rankings(self, request: SearchRequest, *, limit: int, depth: int) -> Rankings:
        """:meth:`search`'s hits and the ``depth`` best of each signal alone, in one pass.

        The components are ranked from the arrays the blend was scored from, as
        :meth:`search` at ``dense_weight`` 1 and 0 would rank them.
        """
        scored = self._scored(request)
        return Rankings(
            scored.ranked(request.dense_weight, limit),
            scored.ranked(1.0, depth) if request.vector is not None else [],
            [h for h in scored.ranked(0.0, depth) if h.lexical > 0],
        )

    def _scored(self, request: SearchRequest) -> Scored:
        """Both signals of every row, or of the candidates of the cells when held.

        From :attr:`cells_from` rows a search scores the dense side through the cells
        if :meth:`nearest` built them (a memory write's reconcile, the night's linking),
        and never builds them itself: they are a second copy of the codes, and a
        process that only searches keeps its memory (bench/RESULTS.md, "The awake
        tick's recall at 100k, round 4").
        """
        vector = request.vector
        keep = self.mask(min_trust=request.min_trust, tags=request.tags)
        lexical = self.lexical_scores(request.text)
        matrix, cells = self._matrix, self._cells
        comparable = vector is not None and vector.shape[0] == self._dim
        if comparable and matrix is not None and cells is not None:
            assert vector is not None  # comparable
            if matrix.rows >= self.cells_from:
                has_vector = self._has_vector.view()
                return from_cells(self.keys, keep, lexical, matrix, cells, has_vector, vector)
        return every_row(self.keys, keep, self.dense_scores(vector), lexical)
