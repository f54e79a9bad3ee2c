"""The Embedder port: texts in, unit-length float32 vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "Vectors"]

Vectors = npt.NDArray[np.float32]
"""An ``(n, dim)`` float32 array; every row has unit L2 norm (or is all zeros)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors whose dot product is their cosine similarity."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` as an ``(len(texts), dim)`` array of unit vectors."""
        ...
