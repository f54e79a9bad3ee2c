"""A hashing embedder for tests only: fast, deterministic, lexical, and not semantic.

Words (and word bigrams) are hashed into a fixed number of buckets with a sign, then the
vector is normalised. Texts that share words are similar; synonyms are not. Use it to
test plumbing without loading a model; never to judge retrieval quality.
"""

from __future__ import annotations

import itertools
import re
import zlib
from collections.abc import Sequence

import numpy as np

from mindspace.embeddings.port import Vectors

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"[a-z0-9]+")


class HashingEmbedder:
    """Signed feature hashing of words and bigrams (tests only).

    Args:
        dim: Number of buckets.
    """

    def __init__(self, dim: int = 256) -> None:
        if dim < 8:
            raise ValueError(f"HashingEmbedder needs dim >= 8, got {dim!r}")
        self.dim = dim
        self.name = f"hashing-{dim}"

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Hash each text's words and bigrams into a unit vector."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
            for feature in features:
                h = zlib.crc32(feature.encode())
                out[row, h % self.dim] += 1.0 if (h >> 31) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out
