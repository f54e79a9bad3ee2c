"""BM25 updated in place scores like an index built from scratch, whatever was written."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from mindspace.memory import lexical
from mindspace.memory.lexical import LexicalIndex


def _text(rng: random.Random) -> str:
    # A few very common words, so that their posting lists are long enough to be kept.
    words = ["tavern", "sword", "gold", "dragon", "river", "Alice", "Bob", "ale", "map"]
    return " ".join(rng.choice(words[: rng.randint(2, len(words))]) for _ in range(6))


def _writes(index: LexicalIndex, seed: int, steps: int) -> Iterator[tuple[dict[str, str], str]]:
    """Random adds, rewrites and removals on ``index``; yields (texts now, a query) between."""
    rng = random.Random(seed)
    texts: dict[str, str] = {}
    for step in range(steps):
        roll = rng.random()
        if roll < 0.6 or not texts:
            # Sometimes a new text under a key already there (a memory rewritten).
            key = rng.choice(list(texts)) if texts and roll < 0.1 else f"m{step}"
            texts[key] = _text(rng)
            index.add(key, texts[key])
        elif roll < 0.7:
            key = rng.choice(list(texts))
            del texts[key]
            index.remove(key)
        else:
            yield texts, _text(rng)


def _by_key(index: LexicalIndex, query: str) -> dict[str, float]:
    scores = index.scores(query)
    return {key: float(scores[row]) for key in index.keys if (row := index.row(key)) is not None}


def test_scores_after_adds_replacements_and_removals_match_a_fresh_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Lists of 8+ postings keep their live postings between searches (2,048 in use).
    monkeypatch.setattr(lexical, "_CACHED_POSTINGS", 8)
    index = LexicalIndex()
    for texts, query in _writes(index, seed=7, steps=400):
        fresh = LexicalIndex()
        fresh.add_many(texts.items())
        assert _by_key(index, query) == pytest.approx(_by_key(fresh, query), rel=1e-6)


def test_frequent_terms_scored_over_every_row_score_exactly_as_from_their_postings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A term in a quarter of the rows or more is scored over every row (from 8,192 rows
    # in use; 16 here) and its frequencies kept across writes and removals: the scores
    # must be the very numbers its postings give, or rankings would change with size.
    index = LexicalIndex()
    checked = 0
    for texts, query in _writes(index, seed=11, steps=300):
        if len(texts) < 16:
            continue
        monkeypatch.setattr(lexical, "_DENSE_MIN_ROWS", 16)
        dense = _by_key(index, query)
        assert any(p.dense is not None for p in index._postings.values())
        monkeypatch.setattr(lexical, "_DENSE_MIN_ROWS", 10**9)  # from postings only
        fresh = LexicalIndex()
        fresh.add_many(texts.items())
        assert dense == _by_key(fresh, query)  # exactly: same float32 arithmetic
        assert dense == _by_key(index, query)
        checked += 1
    assert checked > 20
