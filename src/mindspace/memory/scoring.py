"""One query's dense and BM25 scores over the index's rows, blended at any weight.

Split from :mod:`mindspace.memory.index`, which owns the rows. A search scores its query
once (:class:`Scored`) and ranks the blend and each signal alone from the same arrays
(recall fuses the three, :mod:`mindspace.memory.rank_fusion`). The scores come one of
two ways:

- :func:`every_row` (below the index's ``cells_from`` rows): the dense similarity of
  every row (one int8 kernel pass over the matrix) and BM25 of every row. Exact.
- :func:`from_cells` (from ``cells_from`` rows): the dense similarity of the rows in the
  cells the query probes (:class:`~mindspace.memory.cells.CellIndex`, about a tenth of
  the rows at 100k) and of the :data:`LEXICAL_CANDIDATES` best rows by BM25; the blend
  and the dense ranking are taken among those. A memory close to the query is in a
  probed cell unless the cells split its neighbourhood; one that matches its words is
  among the BM25 candidates. Approximate: measured against the exact pass in
  bench/RESULTS.md ("The awake tick's recall at 100k, round 4").

Each signal is standardised over every eligible row, as the exact pass does. BM25 is
scored for every row in both ways, so its mean and spread are exact. The similarity's
mean and spread are estimated from :data:`SPREAD_SAMPLE` eligible rows spread evenly
over the index: a shift of the mean moves every row alike and changes no order, and the
spread's estimate is within about 1% (which weighs the dense side 0.5 +- 0.005 in a
0.5 : 0.5 blend).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mindspace.memory.cells import CellIndex
from mindspace.memory.fusion import zscores
from mindspace.memory.quantized import QuantizedMatrix
from mindspace.state.semantic import Hit

__all__ = ["LEXICAL_CANDIDATES", "SPREAD_SAMPLE", "Scored", "best_rows", "every_row", "from_cells"]

LEXICAL_CANDIDATES = 1_000
"""Rows with the best BM25 scores whose similarity is computed beside the probed cells'."""

SPREAD_SAMPLE = 4_096
"""Eligible rows whose similarity estimates the mean and spread over every eligible row."""


def best_rows(
    scores: npt.NDArray[np.floating], keep: npt.NDArray[np.bool_], k: int
) -> npt.NDArray[np.int64]:
    """Positions of the ``k`` best finite ``scores`` among ``keep``, best first (exact).

    Ties keep the lower position.
    """
    candidates = np.flatnonzero(keep & np.isfinite(scores))
    if not len(candidates) or k <= 0:
        return np.zeros(0, dtype=np.int64)
    chosen = scores[candidates]
    if len(candidates) > k:
        part = np.argpartition(-chosen, k - 1)[:k]
        candidates, chosen = candidates[part], chosen[part]
    order = np.argsort(-chosen, kind="stable")
    found: npt.NDArray[np.int64] = candidates[order]
    return found


@dataclass(frozen=True)
class Scored:
    """One query's signals over some rows of the index, ready to be blended.

    Attributes:
        keys: The index's key of every row.
        rows: The rows the arrays below hold, ascending (None: every row, in order).
        keep: Which of them the search's filters keep.
        dense: Their similarity (-inf: no comparable vector); None without a query vector.
        lexical: Their BM25 score.
        evidence: Which of them share a term with the query or point its way.
        lexical_z: BM25 standardised over every eligible row.
        dense_z: The similarity standardised over every eligible row with a vector (0
            for the others); None without a query vector.
    """

    keys: Sequence[str]
    rows: npt.NDArray[np.int64] | None
    keep: npt.NDArray[np.bool_]
    dense: npt.NDArray[np.float32] | None
    lexical: npt.NDArray[np.float32]
    evidence: npt.NDArray[np.bool_]
    lexical_z: npt.NDArray[np.float64]
    dense_z: npt.NDArray[np.float64] | None

    def ranked(self, dense_weight: float, limit: int) -> list[Hit]:
        """The ``limit`` best rows of the blend at ``dense_weight``, as hits, best first.

        Rows with no evidence are left out; ties go to the older row.
        """
        blended = self.lexical_z
        if self.dense_z is not None:
            blended = dense_weight * self.dense_z + (1.0 - dense_weight) * blended
        dense, lexical = self.dense, self.lexical
        hits = []
        for at in best_rows(np.where(self.evidence, blended, -np.inf), self.keep, limit).tolist():
            row = at if self.rows is None else int(self.rows[at])
            relevance = float(dense[at]) if dense is not None and np.isfinite(dense[at]) else None
            score = 1.0 / (1.0 + math.exp(-float(blended[at])))
            hits.append(Hit(self.keys[row], round(score, 6), relevance, float(lexical[at])))
        return hits


def every_row(
    keys: Sequence[str],
    keep: npt.NDArray[np.bool_],
    dense: npt.NDArray[np.float32] | None,
    lexical: npt.NDArray[np.float32],
) -> Scored:
    """The exact scores: ``dense`` and ``lexical`` of every row, standardised."""
    evidence = lexical > 0
    dense_z = None
    if dense is not None:
        usable = keep & np.isfinite(dense)
        evidence |= usable & (dense > 0)
        dense_z = np.where(usable, zscores(np.where(usable, dense, 0.0), usable), 0.0)
    return Scored(keys, None, keep, dense, lexical, evidence, zscores(lexical, keep), dense_z)


def from_cells(
    keys: Sequence[str],
    keep: npt.NDArray[np.bool_],
    lexical: npt.NDArray[np.float32],
    matrix: QuantizedMatrix,
    cells: CellIndex,
    has_vector: npt.NDArray[np.bool_],
    vector: npt.NDArray[np.float32],
) -> Scored:
    """The scores of the probed cells' rows and the best rows by BM25 (see the module).

    Args:
        keys: The index's key of every row.
        keep: The rows the search's filters keep (every row).
        lexical: BM25 of every row.
        matrix: The rows' int8 vectors.
        cells: The cells over ``matrix``.
        has_vector: The rows whose vector is comparable with ``vector``.
        vector: The query's vector.
    """
    query = vector.astype(np.float32, copy=False)
    near, near_scores = cells.candidates(query[None, :], -math.inf)[0]
    worded = best_rows(lexical, keep & (lexical > 0), LEXICAL_CANDIDATES)
    # Scattered into a row-sized scratch array and read back in row order: cheaper than
    # sorting the union, and ties keep going to the older row.
    scratch = np.full(lexical.shape[0], np.nan, dtype=np.float32)
    scratch[near] = near_scores
    worded = worded[np.isnan(scratch[worded])]
    scratch[worded] = matrix.scores_of(worded, query)
    rows = np.flatnonzero(~np.isnan(scratch))
    dense = scratch[rows]
    dense[~has_vector[rows]] = -np.inf
    kept = keep[rows]
    usable = kept & np.isfinite(dense)
    candidate_lexical = lexical[rows]
    evidence = (candidate_lexical > 0) | (usable & (dense > 0))
    mean, spread = _spread(matrix, np.flatnonzero(keep & has_vector), query)
    dense_z = np.zeros(rows.shape[0], dtype=np.float64)
    if spread > 0:
        dense_z[usable] = (dense[usable].astype(np.float64) - mean) / spread
    lexical_z = zscores(lexical, keep, rows)
    return Scored(keys, rows, kept, dense, candidate_lexical, evidence, lexical_z, dense_z)


def _spread(
    matrix: QuantizedMatrix, usable: npt.NDArray[np.int64], query: npt.NDArray[np.float32]
) -> tuple[float, float]:
    """Mean and standard deviation of the similarity over the ``usable`` rows (estimated).

    Every row when there are at most :data:`SPREAD_SAMPLE`, else rows evenly spaced
    among them (deterministic: the same index and filters give the same estimate).
    """
    if usable.shape[0] < 2:
        return 0.0, 0.0
    step = max(1, usable.shape[0] // SPREAD_SAMPLE)
    sampled = matrix.scores_of(usable[::step], query).astype(np.float64)
    return float(sampled.mean()), float(sampled.std())
