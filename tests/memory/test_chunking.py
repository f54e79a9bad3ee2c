"""Long text cut into pieces within a limit, at paragraph, sentence and word boundaries."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mindspace.memory.chunking import chunk_text


def _letters(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_a_text_that_fits_is_one_piece() -> None:
    assert chunk_text("  Alice likes ale.  ", 100) == ["Alice likes ale."]
    assert chunk_text(" \n ", 100) == []


def test_paragraphs_are_kept_whole_when_they_fit() -> None:
    first = "Alice runs the forge. " * 5
    second = "Bob keeps the bees. " * 5
    pieces = chunk_text(f"{first}\n\n{second}", 120)
    assert pieces == [first.strip(), second.strip()]


def test_a_long_paragraph_is_cut_between_sentences() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(40))
    pieces = chunk_text(text, 200)
    assert len(pieces) > 1
    assert all(len(p) <= 200 for p in pieces)
    assert all(p.endswith(".") for p in pieces)


def test_a_word_longer_than_the_limit_is_cut_inside() -> None:
    pieces = chunk_text("x" * 25, 10)
    assert pieces == ["x" * 10, "x" * 10, "x" * 5]


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        chunk_text("text", 0)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab .!?\n"), max_size=400),
    limit=st.integers(min_value=1, max_value=60),
)
def test_pieces_fit_and_lose_nothing(text: str, limit: int) -> None:
    pieces = chunk_text(text, limit)
    assert all(0 < len(p) <= limit for p in pieces)
    assert all(p == p.strip() for p in pieces)
    assert _letters("".join(pieces)) == _letters(text)
