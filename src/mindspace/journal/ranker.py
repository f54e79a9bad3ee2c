"""Journal entries scored by embedding them at query time (entries with no stored vector yet).

Entry vectors live in one growing matrix per embedder (:class:`_EntryMatrix`), a row per
distinct entry text, shared by every assistant in the process. A query embeds only the
texts not seen before, appends them as rows, and scores the candidates with one
matrix-vector product over their rows; nothing is stacked per entry per query.

Memory bound: a matrix holds at most ``max(_CACHE_LIMIT, C)`` rows, where ``C`` is the
largest candidate set of a single call (that call needs those vectors in hand anyway),
so at most ``max(_CACHE_LIMIT, C) * dim * 4`` bytes per embedder name (~77 MB for
50,000 rows of 384 floats). When an append would pass the limit, the matrix is compacted
to the rows the current call uses, which drops deleted entries' (and idle ones') rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat

import numpy as np
import numpy.typing as npt

from mindspace.embeddings.port import Embedder, Vectors, embed_async

__all__ = ["EmbeddingRanker"]

_CACHE_LIMIT = 50_000
"""Rows a matrix keeps across calls before it is compacted to the current call's rows."""

_Rows = npt.NDArray[np.intp]


class _EntryMatrix:
    """Unit vectors of entry texts for one embedder, a row per distinct text.

    Rows are appended in place (capacity doubles, so appends are amortised O(1) per row)
    and only ever renumbered by :meth:`add` when it compacts (``generation`` counts
    that); callers re-read row indices that an ``await`` may have made stale.

    Args:
        dim: The embedder's vector length.
    """

    def __init__(self, dim: int) -> None:
        self.index: dict[str, int] = {}
        self.data: Vectors = np.zeros((0, dim), dtype=np.float32)
        self.count = 0
        self.generation = 0
        """Counts compactions: row indices read before a different generation are stale."""

    def lookup(self, texts: Sequence[str]) -> _Rows:
        """Row index of each of ``texts`` in one pass; -1 where a text has no row."""
        found = map(self.index.get, texts, repeat(-1))
        return np.fromiter(found, dtype=np.intp, count=len(texts))

    def add(self, texts: Sequence[str], vectors: Vectors, keep: Sequence[str]) -> None:
        """Append rows for ``texts``; first compact to ``keep`` if the limit would pass."""
        first: dict[str, int] = {}
        for position, text in enumerate(texts):
            first.setdefault(text, position)
        fresh = [(t, i) for t, i in first.items() if t not in self.index]
        if fresh and self.count + len(fresh) > _CACHE_LIMIT:
            self._compact(keep)
        needed = self.count + len(fresh)
        if needed > len(self.data):
            grown = np.zeros(
                (max(needed, min(2 * len(self.data), _CACHE_LIMIT)), self.data.shape[1]), np.float32
            )
            grown[: self.count] = self.data[: self.count]
            self.data = grown
        if fresh:
            positions = [i for _, i in fresh]
            self.data[self.count : needed] = vectors[positions]
            for row, (text, _) in enumerate(fresh, start=self.count):
                self.index[text] = row
            self.count = needed

    def _compact(self, keep: Sequence[str]) -> None:
        # Rows the current call reads survive; the rest (deleted entries, other
        # assistants' idle texts) are dropped and re-embedded if ever asked for again.
        kept = [t for t in dict.fromkeys(keep) if t in self.index]
        old = np.fromiter((self.index[t] for t in kept), dtype=np.intp, count=len(kept))
        size = max(len(kept), min(_CACHE_LIMIT, len(self.data)))
        data = np.zeros((size, self.data.shape[1]), dtype=np.float32)
        np.take(self.data, old, axis=0, out=data[: len(kept)])
        self.data = data
        self.index = {t: row for row, t in enumerate(kept)}
        self.count = len(kept)
        self.generation += 1

    def scores(self, rows: _Rows, query: Vectors) -> npt.NDArray[np.float32]:
        """Cosine similarity of ``query`` to each row in ``rows`` (one product)."""
        if 2 * len(rows) < self.count:  # a small subset: gather its rows first
            return np.take(self.data, rows, axis=0) @ query
        # Most rows are candidates: one product over the live rows, no copy of them.
        everything: npt.NDArray[np.float32] = self.data[: self.count] @ query
        return np.take(everything, rows)


_MATRICES: dict[str, _EntryMatrix] = {}
"""Entry matrices by embedder name, shared by every assistant in the process."""


def _matrix_for(embedder: Embedder) -> _EntryMatrix:
    matrix = _MATRICES.get(embedder.name)
    if matrix is None:
        matrix = _MATRICES[embedder.name] = _EntryMatrix(embedder.dim)
    return matrix


def _absent(texts: Sequence[str], rows: _Rows) -> list[str]:
    """The distinct texts whose row is -1 (no row yet), in first-seen order."""
    return list(dict.fromkeys(texts[i] for i in np.flatnonzero(rows < 0).tolist()))


class EmbeddingRanker:
    """Scores entry texts against a query vector; each text is embedded once per process.

    The fallback for entries whose vectors are not stored yet (written since the last
    sleep, or with no journal index at all).

    Args:
        embedder: The embedder; its vectors are unit length, so a dot product is a cosine.
    """

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    async def scores(self, query: Vectors, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Cosine similarity of ``query`` to each of ``texts``, in order.

        The texts not seen before go in one embedding batch, awaited off the event loop.
        """
        if not texts:
            return np.zeros(0, dtype=np.float32)
        matrix = _matrix_for(self.embedder)
        rows = matrix.lookup(texts)
        while (rows < 0).any():
            # Embed what has no row; another call may compact the matrix while this one
            # awaits (rare), so look again rather than read a row that is gone.
            missing = _absent(texts, rows)
            matrix.add(missing, await embed_async(self.embedder, missing), keep=texts)
            rows = matrix.lookup(texts)
        return matrix.scores(rows, np.asarray(query, dtype=np.float32))
