"""int8 rows for the memory index: close to float32, and the index stays consistent."""

from __future__ import annotations

import numpy as np

from mindspace.memory.quantized import QuantizedMatrix, quantize


def _unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_dot_products_are_within_0_003_of_float32_for_unit_vectors() -> None:
    rows = _unit_rows(2_000, 384, 1)
    queries = _unit_rows(40, 384, 2)
    matrix = QuantizedMatrix(384)
    matrix.set_many(0, rows[:1_000])
    for k in range(1_000, 2_000):
        matrix.set(k, rows[k])
    approx = matrix.scores_many(queries)
    exact = queries @ rows.T
    assert approx.shape == (40, 2_000)
    assert float(np.abs(approx - exact).max()) < 0.003
    assert np.allclose(matrix.scores(queries[0]), approx[0])


def test_zero_and_missing_rows_score_zero_and_rows_grow() -> None:
    matrix = QuantizedMatrix(8)
    matrix.set(40, np.ones(8, dtype=np.float32))  # grows past the initial capacity
    matrix.set(3, None)
    scores = matrix.scores(np.ones(8, dtype=np.float32))
    assert scores.shape == (41,)
    assert scores[40] == 8.0
    assert not scores[:40].any()
    codes, scale = quantize(np.zeros((1, 8), dtype=np.float32))
    assert not codes.any()
    assert scale[0] == 0.0
