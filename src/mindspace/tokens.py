"""Token estimation that needs no network and no tokenizer download.

The estimate counts pieces the way BPE tokenizers roughly split them: one token for a
short word, more for a long one (by length), one per symbol, and digits in groups of
three. Provider ``usage`` replaces it whenever a
response carries real counts.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["estimate_tokens"]

_PIECES = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")


@lru_cache(maxsize=16_384)
def estimate_tokens(text: str) -> int:
    """An estimate of how many tokens ``text`` costs.

    Memoised: every tick re-measures the same conversation history and prompt parts.
    """
    if not text:
        return 0
    total = 0.0
    for piece in _PIECES.findall(text):
        if piece[0].isalpha():
            # Long words split into several tokens; short ones are usually one.
            total += 1.0 if len(piece) <= 6 else len(piece) / 4.5
        elif piece[0].isdigit():
            total += max(1.0, len(piece) / 3)
        else:
            total += 1.0
    return max(1, round(total))
