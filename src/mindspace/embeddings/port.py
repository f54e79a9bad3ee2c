"""The Embedder port: texts in, unit-length float32 vectors out.

The port itself is synchronous so that a third party can plug in any function of texts
to vectors. The engine runs on an event loop, so it never calls ``embed`` itself: it
awaits :func:`embed_async`, the one async boundary for embeddings (see "Async boundary"
in docs/architecture.md).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["AsyncEmbedder", "Embedder", "Vectors", "embed_async"]

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


@runtime_checkable
class AsyncEmbedder(Embedder, Protocol):
    """An embedder that can also embed without blocking the event loop (network I/O)."""

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        """What ``embed`` returns, awaited on the running loop."""
        ...


async def embed_async(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """Embed ``texts`` without blocking the running event loop.

    An embedder with its own ``aembed`` (the OpenAI-compatible one) is awaited directly;
    any other (MiniLM, hashing, a third party's) runs ``embed`` in a worker thread, so a
    slow model delays only the coroutine that waits for it. The caller keeps its unit
    of work on the loop thread: only the texts cross to the worker.

    Args:
        embedder: The embedder.
        texts: The texts to embed.

    Returns:
        An ``(len(texts), dim)`` array of unit vectors.
    """
    aembed = getattr(embedder, "aembed", None)
    if aembed is not None and inspect.iscoroutinefunction(aembed):
        vectors: Vectors = await aembed(texts)
        return vectors
    # A copy: the caller may change its list while the worker reads it.
    return await asyncio.to_thread(embedder.embed, list(texts))
