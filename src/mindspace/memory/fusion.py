"""Score fusion shared by every semantic index: dense and BM25 blended by z-scores.

The embedded index (:mod:`mindspace.memory.index`), the PostgreSQL search
(:mod:`mindspace.storage.pg_semantic`) and the Mem0 tier
(:mod:`mindspace.storage.mem0_semantic`) must score alike, so the standardisation and the
blend live here once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from mindspace.state.semantic import Hit

__all__ = ["fuse_candidates", "whole_zscores", "zscores"]


def fuse_candidates(
    rows: Sequence[Any], limit: int, dense_weight: float, *, whole: bool = False
) -> list[Hit]:
    """The scoring contract over candidate rows: z-scores, blend, logistic, best first.

    Each row is ``(key, dense similarity or None, BM25 score[, BM25 sum, sum of squares,
    memory count])``, in insertion order (PostgreSQL's search and the Mem0 tier build them).

    With ``whole``, BM25 is standardised over every memory of the assistant (from the
    sum and sum of squares of the scores and the number of memories, the row's last
    three columns), as the embedded index does; otherwise over the candidates. Dense
    similarities are standardised over the candidates: only the nearest are fetched.
    """
    if not rows:
        return []
    keys = [str(r[0]) for r in rows]
    has_dense = np.array([r[1] is not None for r in rows], dtype=bool)
    dense = np.array([float(r[1]) if r[1] is not None else 0.0 for r in rows], dtype=np.float64)
    lexical = np.array([float(r[2]) for r in rows], dtype=np.float64)
    evidence = lexical > 0
    total = rows[0][3:6] if len(rows[0]) > 5 else None
    if whole and total is not None and total[2]:
        blended = whole_zscores(lexical, float(total[0]), float(total[1]), int(total[2]))
    else:
        blended = zscores(lexical, np.ones(len(rows), dtype=bool))
    if has_dense.any():
        evidence |= has_dense & (dense > 0)
        dz = np.where(has_dense, zscores(dense, has_dense), 0.0)
        blended = dense_weight * dz + (1.0 - dense_weight) * blended
    # Rows come in insertion order and the sort is stable: ties go to the older memory.
    order = sorted((i for i in range(len(rows)) if evidence[i]), key=lambda i: -blended[i])
    return [
        Hit(
            keys[i],
            round(1.0 / (1.0 + math.exp(-float(blended[i]))), 6),
            float(np.float32(dense[i])) if has_dense[i] else None,
            float(np.float32(lexical[i])),
        )
        for i in order[:limit]
    ]


def zscores(
    values: npt.NDArray[np.floating],
    keep: npt.NDArray[np.bool_],
    rows: npt.NDArray[np.int64] | None = None,
) -> npt.NDArray[np.float64]:
    """``values`` standardised over the rows in ``keep`` (all zeros when they do not vary).

    With ``rows``, only those rows' z-scores are returned (the mean and spread are still
    every kept row's): the same numbers as ``zscores(values, keep)[rows]``, without
    standardising every row.
    """
    size = values.shape[0] if rows is None else rows.shape[0]
    chosen = values[keep].astype(np.float64)
    if chosen.size < 2:
        return np.zeros(size, dtype=np.float64)
    spread = float(chosen.std())
    if spread == 0.0:
        return np.zeros(size, dtype=np.float64)
    picked = values if rows is None else values[rows]
    return (picked.astype(np.float64) - float(chosen.mean())) / spread


def whole_zscores(
    values: npt.NDArray[np.float64], total: float, squares: float, count: int
) -> npt.NDArray[np.float64]:
    """``values`` standardised over ``count`` scores summing to ``total`` (and ``squares``)."""
    if count < 2:
        return np.zeros(values.shape[0], dtype=np.float64)
    mean = total / count
    variance = squares / count - mean * mean
    if variance <= 1e-12:
        return np.zeros(values.shape[0], dtype=np.float64)
    return (values - mean) / math.sqrt(variance)
