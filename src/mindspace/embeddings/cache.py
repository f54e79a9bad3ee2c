"""Vectors of recently embedded texts, shared by every assistant on one embedder.

Why: an awake tick embeds the texts it looks memories up by, and much of that is the
same tick after tick: the active goals' descriptions, a speaker's name, the memory key
of a message that the tick also stores. With the default MiniLM embedder each text costs
about 9 ms of CPU, so a text embedded twice is a tick 9 ms slower. :class:`CachedEmbedder`
remembers the last :data:`SIZE` texts' vectors (least recently used out first) and
embeds only the texts it has not seen. An embedder maps a text to one vector, always,
so a cached vector is the vector.

One cache per underlying embedder object (:func:`cached`): the assistants of a process
that share an embedder share its cache, so a worker with 1,000 assistants holds one
cache, not 1,000.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from mindspace.embeddings.port import Embedder, Vectors, embed_async

__all__ = ["OWN_SIZE", "SIZE", "CachedEmbedder", "cached"]

SIZE = 1024
"""Texts whose vectors are kept (1.5 MB at 384 dimensions)."""

OWN_SIZE = 64
"""Texts kept by the cache of an embedder that cannot be shared (see :func:`cached`)."""

_shared: weakref.WeakKeyDictionary[Embedder, CachedEmbedder] = weakref.WeakKeyDictionary()
_shared_lock = threading.Lock()


def cached(embedder: Embedder) -> CachedEmbedder:
    """The cache in front of ``embedder`` (the same one for every caller)."""
    if isinstance(embedder, CachedEmbedder):
        return embedder
    with _shared_lock:
        try:
            found = _shared.get(embedder)
        except TypeError:
            # Unhashable or not weakly referenceable: a small cache of its own (one per
            # assistant, so kept small: a worker may open a thousand of them).
            return CachedEmbedder(embedder, size=OWN_SIZE)
        if found is None:
            found = CachedEmbedder(embedder)
            _shared[embedder] = found
        return found


class CachedEmbedder:
    """An :class:`~mindspace.embeddings.port.Embedder` that embeds each text once.

    Args:
        inner: The embedder that makes the vectors.
        size: How many texts' vectors to keep.
    """

    def __init__(self, inner: Embedder, size: int = SIZE) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.size = size
        self._vectors: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self.embedded = 0
        """Texts given to the inner embedder so far (cache misses)."""

    def peek(self, text: str) -> Vectors | None:
        """The vector of ``text`` if it is cached (a 1-D array), without embedding it."""
        with self._lock:
            vector = self._vectors.get(text)
            if vector is not None:
                self._vectors.move_to_end(text)
            return vector

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``, the ones not seen lately only (blocking)."""
        out, missing = self._gather(texts)
        if missing:
            fresh = list(dict.fromkeys(texts[row] for row in missing))
            self._fill(out, texts, missing, self._keep(fresh, self.inner.embed(fresh)))
        return out

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        """:meth:`embed` without blocking the event loop (see ``embed_async``)."""
        out, missing = self._gather(texts)
        if missing:
            fresh = list(dict.fromkeys(texts[row] for row in missing))
            vectors = await embed_async(self.inner, fresh)
            self._fill(out, texts, missing, self._keep(fresh, vectors))
        return out

    @staticmethod
    def _fill(
        out: Vectors, texts: Sequence[str], rows: list[int], by_text: dict[str, Vectors]
    ) -> None:
        for row in rows:
            out[row] = by_text[texts[row]]

    def _gather(self, texts: Sequence[str]) -> tuple[Vectors, list[int]]:
        """The cached rows of ``texts``, and the rows still to embed."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing = []
        with self._lock:
            for row, text in enumerate(texts):
                vector = self._vectors.get(text)
                if vector is None:
                    missing.append(row)
                else:
                    self._vectors.move_to_end(text)
                    out[row] = vector
        return out, missing

    def _keep(self, texts: list[str], vectors: Vectors) -> dict[str, Vectors]:
        with self._lock:
            self.embedded += len(texts)
            for text, vector in zip(texts, vectors, strict=True):
                self._vectors[text] = vector.copy()
                self._vectors.move_to_end(text)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return dict(zip(texts, vectors, strict=True))
