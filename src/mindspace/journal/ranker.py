"""Semantic ranking of journal entries with an embedder (``search_journal``'s semantic mode)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from mindspace.embeddings.port import Embedder, Vectors, embed_async
from mindspace.journal.records import JournalEntry

__all__ = ["EmbeddingRanker"]

_CACHE_LIMIT = 50_000
_VECTORS: OrderedDict[tuple[str, str], Vectors] = OrderedDict()
"""Entry vectors by (embedder name, content), shared by every assistant in the process."""


class EmbeddingRanker:
    """Ranks entries by cosine similarity to the query; each text is embedded once.

    Args:
        embedder: The embedder; its vectors are unit length, so a dot product is a cosine.
    """

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    async def rank(
        self, query: str, entries: Sequence[JournalEntry], limit: int
    ) -> list[tuple[JournalEntry, float]]:
        """The ``limit`` entries most similar to ``query``, best first.

        The query and the entries not seen before go in one embedding batch, awaited
        off the event loop; the ranking itself runs on the caller's thread.
        """
        if not entries or limit <= 0:
            return []
        name = self.embedder.name
        missing = list(
            dict.fromkeys(e.content for e in entries if (name, e.content) not in _VECTORS)
        )
        vectors = await embed_async(self.embedder, [*missing, query])
        return self._ranked(query, entries, limit, missing, vectors)

    def _ranked(
        self,
        query: str,
        entries: Sequence[JournalEntry],
        limit: int,
        missing: Sequence[str],
        vectors: Vectors,
    ) -> list[tuple[JournalEntry, float]]:
        name = self.embedder.name
        for text, vector in zip(missing, vectors[: len(missing)], strict=True):
            _VECTORS[(name, text)] = vector
        while len(_VECTORS) > _CACHE_LIMIT:
            _VECTORS.popitem(last=False)
        matrix = np.stack([_VECTORS[(name, e.content)] for e in entries])
        scores = matrix @ vectors[len(missing)]
        order = np.argsort(-scores, kind="stable")[:limit]
        return [(entries[i], float(scores[i])) for i in order]
