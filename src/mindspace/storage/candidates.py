"""Search by candidates: each signal's best memories fetched, then fused in Python.

The PostgreSQL and Mem0 semantic indexes differ only in how they fetch a search's
candidates (one SQL statement; Mem0's nearest points and an in-process BM25). Both then
apply the port's scoring contract to them alike, and both look up a batch's neighbours
row by row: :class:`CandidateSearch` holds that half once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from mindspace.memory.fusion import fuse_candidates
from mindspace.memory.rank_fusion import candidate_rankings
from mindspace.memory.rows import neighbours
from mindspace.state.semantic import Hit, Neighbour, Rankings, SearchRequest

__all__ = ["CANDIDATES", "CandidateSearch"]

CANDIDATES = 100
"""At least this many candidates from each side (more when a search asks for more)."""


class CandidateSearch(ABC):
    """:meth:`search`, :meth:`rankings` and :meth:`nearest` of an out-of-process index."""

    approximate = False
    """Recall asks these for the full spare candidates (their candidate fetch is not cut)."""

    def search(self, request: SearchRequest, *, limit: int) -> list[Hit]:
        """Hybrid search: each signal's candidates, scored and blended as embedded."""
        if limit <= 0:
            return []
        rows, whole = self._candidates(request, max(CANDIDATES, limit))
        return fuse_candidates(rows, limit, request.dense_weight, whole=whole)

    def rankings(self, request: SearchRequest, *, limit: int, depth: int) -> Rankings:
        """:meth:`search`'s hits and each signal's ``depth`` best, from one candidate fetch.

        The components are ranked among the blend's candidates, which hold each
        signal's best :data:`CANDIDATES` (or ``limit``, or ``depth``) memories.
        """
        rows, whole = self._candidates(request, max(CANDIDATES, limit, depth))
        dense = request.vector is not None
        return candidate_rankings(
            rows, limit, depth, request.dense_weight, whole=whole, dense=dense
        )

    @abstractmethod
    def _candidates(self, request: SearchRequest, k: int) -> tuple[Sequence[Any], bool]:
        """The ``k`` best eligible memories of each signal, with both signals of each.

        Returns:
            :func:`~mindspace.memory.fusion.fuse_candidates`' rows, in insertion order,
            and whether BM25 may be standardised over every memory (the rows then carry
            the sums it needs).
        """

    def nearest(
        self, vectors: npt.NDArray[np.float32], *, k: int, threshold: float, exclude: Sequence[str]
    ) -> list[list[Neighbour]]:
        """For each row of ``vectors``, up to ``k`` memories with cosine >= ``threshold``."""
        batch = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        if not batch.shape[0] or k <= 0:
            return [[] for _ in range(batch.shape[0])]
        own = [exclude[i] if i < len(exclude) else "" for i in range(batch.shape[0])]
        found = self._nearby(batch, k, own)
        return [neighbours(pairs, k=k, threshold=threshold) for pairs in found]

    @abstractmethod
    def _nearby(
        self, batch: npt.NDArray[np.float32], k: int, own: list[str]
    ) -> list[list[tuple[str, float]]]:
        """Each row's ``k`` nearest memories as (key, cosine), never the row's ``own`` key.

        Args:
            batch: One query vector per row (a 2-D array, at least one row).
            k: How many per row at most (``k`` > 0).
            own: Each row's key to leave out ("" for none).

        Returns:
            One list per row, in the order that breaks ties (older memory first).
        """
