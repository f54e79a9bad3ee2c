"""Splitting a long text into pieces that each fit a limit, at natural boundaries.

Anything a tool or host accepted must become memory, even when it is longer than a memory
may be (an assistant's code answer, a long journal entry). :func:`chunk_text` cuts such a
text into consecutive pieces of at most ``max_chars`` characters: at paragraph breaks
first, then at sentence ends, then between words, and only for a single word longer than
the limit in the middle of it. Small neighbouring paragraphs and sentences are packed
together, so a piece is as long as the limit allows and no shorter than it need be.

Example:
    >>> chunk_text("One. Two. Three.", max_chars=10)
    ['One. Two.', 'Three.']
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["chunk_text"]

_PARAGRAPH = re.compile(r"\n\s*\n")
# A sentence ends at . ! ? (and their full-width forms) followed by space.
_SENTENCE = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+")
_SPACE = re.compile(r"\s+")


def chunk_text(text: str, max_chars: int) -> list[str]:
    """``text`` cut into stripped, non-empty pieces of at most ``max_chars`` characters.

    Args:
        text: Any text; surrounding whitespace is dropped.
        max_chars: The most characters a piece may have (at least 1).

    Returns:
        The pieces in order (``[text.strip()]`` when it already fits; ``[]`` when blank).
        Their non-space characters, in order, are exactly those of ``text``.

    Raises:
        ValueError: ``max_chars`` is less than 1.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, not {max_chars!r}")
    stripped = text.strip()
    if not stripped:
        return []
    if len(stripped) <= max_chars:
        return [stripped]
    return list(_pack(_units(stripped, max_chars), max_chars))


def _units(text: str, max_chars: int) -> Iterator[tuple[str, str]]:
    """The text's smallest needed pieces, each with the separator that precedes it."""
    for p, paragraph in enumerate(_PARAGRAPH.split(text)):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        separator = "\n\n" if p else ""
        if len(paragraph) <= max_chars:
            yield separator, paragraph
            continue
        for s, sentence in enumerate(_SENTENCE.split(paragraph)):
            sentence = sentence.strip()
            if not sentence:
                continue
            gap = separator if s == 0 else " "
            if len(sentence) <= max_chars:
                yield gap, sentence
                continue
            for w, word in enumerate(_SPACE.split(sentence)):
                if not word:
                    continue
                space = gap if w == 0 else " "
                for start in range(0, len(word), max_chars):
                    yield (space if start == 0 else ""), word[start : start + max_chars]


def _pack(units: Iterator[tuple[str, str]], max_chars: int) -> Iterator[str]:
    """Consecutive units joined while the piece stays within ``max_chars``."""
    piece = ""
    for separator, unit in units:
        if piece and len(piece) + len(separator) + len(unit) <= max_chars:
            piece += separator + unit
            continue
        if piece:
            yield piece
        piece = unit
    if piece:
        yield piece
