"""Vectors kept as int8 rows with a scale each: a quarter of float32's memory, and faster.

Why: an assistant with 100k memories of 384 floats held 153 MB of float32 vectors in
every process that opened it. Here each row is stored as ``round(v * 127 / max|v|)`` in
int8 plus its scale ``max|v| / 127`` (38 MB at 100k), and a query is scored with the
int8 dot-product kernels of ``numkong`` (SIMD, int32 accumulation), about 3x faster than
NumPy's float32 matrix-vector product on the same rows. A dot product read back this
way is within about 0.003 of the float32 one for unit vectors of 384 dimensions
(``tests/memory/test_quantized.py``); callers that report a similarity to users
recompute it exactly from the stored float32 vector of the few rows they return.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

_kernels: Any
try:  # pragma: no cover - exercised by whichever branch the install has
    import numkong as _kernels
except ImportError:  # pragma: no cover
    _kernels = None

__all__ = ["QuantizedMatrix", "dots", "quantize"]

_CHUNK = 32
"""Queries scored per kernel call (bounds the n x chunk int32 temporary)."""


def quantize(
    vectors: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Rows of ``vectors`` as int8 codes and their float32 scales (zero rows: scale 0)."""
    rows = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    peak = np.abs(rows).max(axis=1) if rows.shape[1] else np.zeros(rows.shape[0])
    scale = (peak / 127.0).astype(np.float32)
    safe = np.where(scale > 0, scale, 1.0).astype(np.float32)
    codes = np.clip(np.rint(rows / safe[:, None]), -127, 127).astype(np.int8)
    return codes, scale


class QuantizedMatrix:
    """A growable matrix of int8 rows; scores are dot products with float32 queries.

    Args:
        dim: The vectors' length.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._codes: npt.NDArray[np.int8] = np.zeros((16, dim), dtype=np.int8)
        self._scale: npt.NDArray[np.float32] = np.zeros(16, dtype=np.float32)
        self.rows = 0

    @property
    def nbytes(self) -> int:
        """Bytes held (capacity included)."""
        return int(self._codes.nbytes + self._scale.nbytes)

    def reserve(self, rows: int) -> None:
        """Make room for ``rows`` rows without further copies."""
        if rows <= self._codes.shape[0]:
            return
        codes = np.zeros((rows, self.dim), dtype=np.int8)
        codes[: self.rows] = self._codes[: self.rows]
        scale = np.zeros(rows, dtype=np.float32)
        scale[: self.rows] = self._scale[: self.rows]
        self._codes, self._scale = codes, scale

    def set(self, row: int, vector: npt.NDArray[np.float32] | None) -> None:
        """Store ``vector`` at ``row`` (growing by doubling); None stores a zero row."""
        if row >= self._codes.shape[0]:
            self.reserve(max(16, 2 * self._codes.shape[0], row + 1))
        if vector is None:
            self._codes[row] = 0
            self._scale[row] = 0.0
        else:
            codes, scale = quantize(vector)
            self._codes[row] = codes[0]
            self._scale[row] = scale[0]
        self.rows = max(self.rows, row + 1)

    def set_many(self, start: int, vectors: npt.NDArray[np.float32]) -> None:
        """Store consecutive rows from ``start`` (one quantisation pass)."""
        end = start + vectors.shape[0]
        self.reserve(max(end, 16))
        codes, scale = quantize(vectors)
        self._codes[start:end] = codes
        self._scale[start:end] = scale
        self.rows = max(self.rows, end)

    def block(self, start: int, stop: int) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
        """The codes and scales of rows ``start:stop`` (views, not copies)."""
        return self._codes[start:stop], self._scale[start:stop]

    def dense(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The float32 vectors the int8 ``rows`` stand for (codes times scale)."""
        widened: npt.NDArray[np.float32] = self._codes[rows].astype(np.float32)
        widened *= self._scale[rows, None]
        return widened

    def scores(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The dot product of every row with ``query`` (approximately: int8 codes)."""
        scored: npt.NDArray[np.float32] = self.scores_many(query[None, :])[0]
        return scored

    def scores_of(
        self, rows: npt.NDArray[np.int64], query: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        """The dot product of each of ``rows`` with ``query``, as :meth:`scores` gives it."""
        if not rows.shape[0]:
            return np.zeros(0, dtype=np.float32)
        q_codes, q_scale = quantize(query[None, :])
        out: npt.NDArray[np.float32] = dots(self._codes[rows], q_codes)[:, 0]
        out *= self._scale[rows]
        out *= q_scale[0]
        return out

    def scores_many(self, queries: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Dot products of every row with each query: shape (queries, rows)."""
        batch = np.atleast_2d(np.asarray(queries, dtype=np.float32))
        out = np.empty((batch.shape[0], self.rows), dtype=np.float32)
        if not self.rows:
            return out
        codes = self._codes[: self.rows]
        scale = self._scale[: self.rows]
        for start in range(0, batch.shape[0], _CHUNK):
            q_codes, q_scale = quantize(batch[start : start + _CHUNK])
            dots_ = dots(codes, q_codes)  # (rows, chunk) int32-exact integers
            out[start : start + _CHUNK] = (dots_ * scale[:, None]).T * q_scale[:, None]
        return out


def dots(codes: npt.NDArray[np.int8], queries: npt.NDArray[np.int8]) -> npt.NDArray[np.float32]:
    """``codes @ queries.T`` of int8 matrices, accumulated exactly, as float32."""
    if _kernels is not None:
        packed = _kernels.dots_pack(np.ascontiguousarray(queries))
        return np.asarray(_kernels.dots_packed(codes, packed), dtype=np.float32)
    # Without numkong: float32 BLAS on the widened codes is exact (|sum| < 2^24).
    return codes.astype(np.float32) @ queries.T.astype(np.float32)
