"""The cell index finds the link candidates from a fraction of the rows, and follows new rows."""

from __future__ import annotations

import numpy as np

from mindspace.memory.ann import MIN_ROWS, CellIndex
from mindspace.memory.quantized import QuantizedMatrix


def _clustered(rows: int, dim: int, seed: int) -> np.ndarray:
    """Unit vectors around 400 topics (what texts about a few hundred things look like)."""
    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(400, dim))
    vectors = topics[rng.integers(0, 400, rows)] + 0.35 * rng.normal(size=(rows, dim))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def _exact_top(matrix: QuantizedMatrix, query: np.ndarray, k: int) -> set[int]:
    scores = matrix.scores(query)
    return {int(r) for r in np.argsort(-scores)[1 : k + 1]}  # [0] is the query itself


def test_below_min_rows_nothing_is_built() -> None:
    matrix = QuantizedMatrix(16)
    matrix.set_many(0, _clustered(1000, 16, seed=1))
    assert not CellIndex().sync(matrix, np.ones(1000, dtype=bool))


def test_cells_find_most_neighbours_from_a_few_percent_of_the_rows() -> None:
    rows, dim = MIN_ROWS + 5000, 48
    vectors = _clustered(rows, dim, seed=2)
    matrix = QuantizedMatrix(dim)
    matrix.set_many(0, vectors)
    cells = CellIndex()
    assert cells.sync(matrix, np.ones(rows, dtype=bool))
    assert cells.cells == int(np.sqrt(rows))
    found = wanted = 0
    scanned = []
    for row in range(0, rows, rows // 100):
        candidates = cells.probe(vectors[row : row + 1])
        scanned.append(len(candidates))
        truth = _exact_top(matrix, vectors[row], 5)
        scores = matrix.scores_many_at(candidates, vectors[row : row + 1])[0]
        got = {int(candidates[i]) for i in np.argsort(-scores)[1:6]}
        found += len(truth & got)
        wanted += len(truth)
    assert found / wanted >= 0.9
    assert np.mean(scanned) < 0.25 * rows


def test_rows_added_after_training_are_found() -> None:
    dim = 32
    vectors = _clustered(MIN_ROWS + 10, dim, seed=3)
    matrix = QuantizedMatrix(dim)
    matrix.set_many(0, vectors[:MIN_ROWS])
    has_vector = np.ones(MIN_ROWS + 10, dtype=bool)
    cells = CellIndex()
    assert cells.sync(matrix, has_vector[:MIN_ROWS])
    for offset in range(10):  # one by one, as memories arrive
        matrix.set(MIN_ROWS + offset, vectors[MIN_ROWS + offset])
    assert cells.sync(matrix, has_vector)
    for row in range(MIN_ROWS, MIN_ROWS + 10):
        assert row in set(cells.probe(vectors[row : row + 1]).tolist())
