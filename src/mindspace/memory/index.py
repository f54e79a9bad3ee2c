"""The in-process search index of one assistant's semantic memories.

Dense vectors live in one float32 matrix searched exactly (a matrix-vector product
and ``argpartition``); BM25 postings live beside it in the same row space, and a query
blends the two by standardised scores; metadata
filters (minimum source trust, required tags) become boolean masks. The index is a
:class:`~mindspace.state.unit.CacheListener`: every committed write or delete of a
memory is applied in place, so it never drifts from the store. Deleted rows are masked
and the arrays are compacted when more than half of them are dead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from mindspace.clock import parse_time
from mindspace.memory.lexical import LexicalIndex
from mindspace.memory.records import Memory
from mindspace.state.models import Record
from mindspace.state.semantic import Hit, Neighbour
from mindspace.state.unit import StateCache

__all__ = ["Hit", "MemoryIndex", "rrf"]

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


class MemoryIndex:
    """Dense + lexical index over the committed memories of one assistant.

    Args:
        cache: The assistant's state cache (the index listens to it).
        embedder: The name of the embedder queries use; vectors made by another
            embedder are not comparable and are left out of dense search (they stay
            searchable lexically). None accepts any vector of the matching size.
    """

    def __init__(self, cache: StateCache, embedder: str | None = None) -> None:
        self._cache = cache
        self.embedder = embedder
        self._built = False
        cache.listen(Memory.kind, self)
        self._clear()

    def _clear(self) -> None:
        self.keys: list[str] = []
        self._row_of: dict[str, int] = {}
        self._dim: int | None = None
        self._matrix: npt.NDArray[np.float32] = np.zeros((0, 0), dtype=np.float32)
        self._has_vector: list[bool] = []
        self._alive: list[bool] = []
        self._trust: list[float] = []
        self._occurred: list[float] = []
        self._entities: list[str] = []
        self._tags: dict[str, set[int]] = {}
        self._lexical = LexicalIndex()
        self._dead = 0
        self._arrays: (
            tuple[npt.NDArray[np.bool_], npt.NDArray[np.float32], npt.NDArray[np.bool_]] | None
        ) = None

    def _state(
        self,
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """(alive, trust, has_vector) as arrays, rebuilt only after a write."""
        if self._arrays is None:
            self._arrays = (
                np.asarray(self._alive, dtype=bool),
                np.asarray(self._trust, dtype=np.float32),
                np.asarray(self._has_vector, dtype=bool),
            )
        return self._arrays

    # -- CacheListener -------------------------------------------------------------------
    def applied(self, key: str, record: Record | None) -> None:
        """Apply one committed write (None: a delete)."""
        if not self._built:
            return  # built from the cache on first use, which already holds this write
        self._remove(key)
        if isinstance(record, Memory):
            self._add(record)
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
        self._add_many(self._cache.records(Memory).values())
        self._built = True

    def _add_many(self, memories: Iterable[Memory]) -> None:
        items = list(memories)
        vectors = [
            m.vector() if self.embedder is None or m.embedder == self.embedder else None
            for m in items
        ]
        dims = {v.shape[0] for v in vectors if v is not None}
        if dims:
            self._dim = max(dims)
            self._matrix = np.zeros((max(len(items), 16), self._dim), dtype=np.float32)
        for memory, vector in zip(items, vectors, strict=True):
            self._add(memory, vector)

    def _add(self, memory: Memory, vector: npt.NDArray[np.float32] | None = None) -> None:
        self._arrays = None
        vector = memory.vector() if vector is None else vector
        row = len(self.keys)
        self.keys.append(memory.id)
        self._row_of[memory.id] = row
        self._alive.append(True)
        self._trust.append(memory.source_trust)
        self._occurred.append(parse_time(memory.occurred_at).timestamp())
        self._entities.append((memory.source_entity or "").casefold())
        for tag in memory.tags:
            self._tags.setdefault(tag.casefold(), set()).add(row)
        self._lexical.add(memory.id, memory.lexical_key())
        same_model = self.embedder is None or memory.embedder == self.embedder
        usable = (
            vector is not None
            and same_model
            and (self._dim is None or vector.shape[0] == self._dim)
        )
        if vector is not None and usable:
            if self._dim is None:
                self._dim = vector.shape[0]
                self._matrix = np.zeros((16, self._dim), dtype=np.float32)
            if row >= self._matrix.shape[0]:
                grown = np.zeros((max(16, 2 * self._matrix.shape[0]), self._dim), dtype=np.float32)
                grown[: self._matrix.shape[0]] = self._matrix
                self._matrix = grown
            self._matrix[row] = vector
        self._has_vector.append(bool(usable))

    def _remove(self, key: str) -> None:
        row = self._row_of.pop(key, None)
        if row is None:
            return
        self._alive[row] = False
        self._arrays = None
        self._lexical.remove(key)
        self._dead += 1

    def _maybe_compact(self) -> None:
        if self._dead > 64 and self._dead * 2 > len(self.keys):
            self._built = False
            self.ensure()

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
        """For each row of ``vectors``, up to ``k`` memories with cosine >= ``threshold``.

        The rows are scored together, one matrix product per batch of 256, so linking
        a batch costs one pass over the matrix rather than one per memory.
        """
        self.ensure()
        batch = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        results: list[list[Neighbour]] = [[] for _ in range(batch.shape[0])]
        if self._dim is None or batch.shape[1] != self._dim or not len(self.keys):
            return results
        alive, _, has_vector = self._state()
        usable = alive & has_vector
        n = len(self.keys)
        for start in range(0, batch.shape[0], 256):
            sims = batch[start : start + 256] @ self._matrix[:n].T
            sims[:, ~usable] = -np.inf
            for offset, row_scores in enumerate(sims):
                i = start + offset
                own = self._row_of.get(exclude[i]) if i < len(exclude) else None
                if own is not None:
                    row_scores[own] = -np.inf
                keep = row_scores >= np.float32(threshold)
                results[i] = [
                    Neighbour(self.keys[r], round(float(row_scores[r]), 4))
                    for r in self.top(row_scores, keep, k)
                ]
        return results

    def mask(self, *, min_trust: float = 0.0, tags: Sequence[str] = ()) -> npt.NDArray[np.bool_]:
        """Rows that are alive, trusted enough and carry every tag in ``tags``."""
        self.ensure()
        alive, trust, _ = self._state()
        keep = alive.copy()
        if min_trust > 0:
            keep &= trust >= np.float32(min_trust)
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
        """Cosine similarity of every row to ``vector`` (rows without a vector: -inf)."""
        self.ensure()
        if vector is None or self._dim is None or vector.shape[0] != self._dim:
            return None
        n = len(self.keys)
        sims = self._matrix[:n] @ vector.astype(np.float32, copy=False)
        sims[~self._state()[2]] = -np.inf
        return sims

    def lexical_scores(self, query: str) -> npt.NDArray[np.float32]:
        """BM25 score of every row."""
        self.ensure()
        return self._lexical.scores(query)

    @property
    def occurred(self) -> npt.NDArray[np.float64]:
        """When each row's memory happened, as POSIX seconds."""
        return np.asarray(self._occurred, dtype=np.float64)

    @property
    def entities(self) -> list[str]:
        """Each row's source entity, casefolded."""
        return self._entities

    def top(
        self, scores: npt.NDArray[np.floating], keep: npt.NDArray[np.bool_], k: int
    ) -> list[int]:
        """Rows of the ``k`` best scores among ``keep``, best first (exact)."""
        candidates = np.flatnonzero(keep & np.isfinite(scores))
        if not len(candidates) or k <= 0:
            return []
        chosen = scores[candidates]
        if len(candidates) > k:
            part = np.argpartition(-chosen, k - 1)[:k]
            candidates, chosen = candidates[part], chosen[part]
        order = np.argsort(-chosen, kind="stable")
        return [int(r) for r in candidates[order]]

    def search(
        self,
        query: str,
        vector: npt.NDArray[np.float32] | None,
        *,
        limit: int,
        min_trust: float = 0.0,
        tags: Sequence[str] = (),
        dense_weight: float = 0.5,
    ) -> list[Hit]:
        """Hybrid search: dense and BM25 scores, standardised per query, then blended.

        Each signal is turned into z-scores over the eligible rows (so neither scale
        dominates) and mixed ``dense_weight : 1 - dense_weight``. Rows with no evidence
        at all (no shared term and no positive similarity) are left out. Without a query
        vector the ranking is BM25 alone.
        """
        keep = self.mask(min_trust=min_trust, tags=tags)
        dense = self.dense_scores(vector)
        lexical = self.lexical_scores(query)
        evidence = lexical > 0
        blended = _zscores(lexical, keep)
        if dense is not None:
            usable = keep & np.isfinite(dense)
            evidence |= usable & (dense > 0)
            dz = np.where(usable, _zscores(np.where(usable, dense, 0.0), usable), 0.0)
            blended = dense_weight * dz + (1.0 - dense_weight) * blended
        rows = self.top(np.where(evidence, blended, -np.inf), keep, limit)
        hits = []
        for row in rows:
            relevance = float(dense[row]) if dense is not None and np.isfinite(dense[row]) else None
            score = 1.0 / (1.0 + math.exp(-float(blended[row])))
            hits.append(Hit(self.keys[row], round(score, 6), relevance, float(lexical[row])))
        return hits


def _zscores(
    values: npt.NDArray[np.floating], keep: npt.NDArray[np.bool_]
) -> npt.NDArray[np.float64]:
    """``values`` standardised over the rows in ``keep`` (all zeros when they do not vary)."""
    chosen = values[keep].astype(np.float64)
    if chosen.size < 2:
        return np.zeros(values.shape[0], dtype=np.float64)
    spread = float(chosen.std())
    if spread == 0.0:
        return np.zeros(values.shape[0], dtype=np.float64)
    return (values.astype(np.float64) - float(chosen.mean())) / spread
