"""Stored journal entry vectors: the embedded index over them and the sleep step that fills them.

``search_journal`` ranks entries by the vectors stored as ``journal_vector`` records
(:class:`~mindspace.journal.records.EntryVector`), through the
:class:`~mindspace.state.semantic.JournalIndex` port: on SQLite (and any store without
its own) :class:`EntryVectorIndex`, a float32 matrix kept in step with commits; on
PostgreSQL an exact pgvector scan over the candidates in SQL.

Vectors are written by :func:`embed_pending_entries`, one batch per sleep tick, so an
awake tick never pays for embedding; entries written since the last sleep are embedded
when a search needs them (and kept in the process-wide matrix of
:class:`~mindspace.journal.ranker.EmbeddingRanker`) until the night stores theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from mindspace.embeddings.port import Embedder, embed_async
from mindspace.journal.records import EntryVector, JournalEntry, text_digest
from mindspace.state.models import Record
from mindspace.state.semantic import JournalIndex, Ranked, rank_candidates
from mindspace.state.unit import StateCache, Unit

__all__ = ["EntryVectorIndex", "embed_pending_entries", "entry_digest"]

_FIELDS = ("key", "embedder", "digest", "embedding")


@lru_cache(maxsize=65_536)
def entry_digest(text: str) -> str:
    """:func:`text_digest` of an entry's text, memoised (every sleep tick asks for all)."""
    return text_digest(text)


class EntryVectorIndex:
    """The stored vectors of one assistant's journal entries by one embedder, in memory.

    Rows are float32 (``4 * dim`` bytes per entry: 15 MB for 10,000 entries of 384
    dimensions), appended in place and compacted when half of them are dead. Built on
    first use by streaming the ``journal_vector`` rows from the store; a listener on the
    state cache keeps it in step with this process's and other processes' commits.

    Args:
        cache: The assistant's state cache.
        embedder: The embedder whose vectors are ranked (others' are not loaded).
    """

    def __init__(self, cache: StateCache, embedder: str) -> None:
        self._cache = cache
        self.embedder = embedder
        self._built = False
        cache.listen(EntryVector.kind, self)
        self._clear()

    def _clear(self) -> None:
        self._row_of: dict[str, int] = {}
        self._digest_of: dict[str, str] = {}
        self._current: set[tuple[str, str]] = set()
        """(key, digest) of every stored vector: a candidate's one membership test."""
        self._data: npt.NDArray[np.float32] | None = None
        self._count = 0
        self._dead = 0

    # -- CacheListener -------------------------------------------------------------------
    def applied(self, key: str, record: Record | None) -> None:
        """Apply one committed write (None: a delete)."""
        if not self._built:
            return  # built from the store on first use, which already holds this write
        self._remove(key)
        if isinstance(record, EntryVector):
            self._add(record.key, record.embedder, record.digest, record.embedding)
        if self._dead > 64 and 2 * self._dead > self._count:
            self.reset()

    def reset(self) -> None:
        """The cache was reloaded: rebuild on next use."""
        self._built = False
        self._clear()

    # -- building ------------------------------------------------------------------------
    def _ensure(self) -> None:
        if self._built:
            return
        self._clear()
        scan = self._cache.store.scan(self._cache.assistant_id, EntryVector.kind, _FIELDS)
        for row in scan:
            self._add(str(row["key"]), str(row["embedder"]), str(row["digest"]), row["embedding"])
        self._built = True

    def _add(self, key: str, embedder: str, digest: str, embedding: Any) -> None:
        if embedder != self.embedder:
            return
        vector = np.frombuffer(embedding, dtype=np.float32)
        if self._data is None:
            self._data = np.zeros((64, vector.shape[0]), dtype=np.float32)
        if vector.shape[0] != self._data.shape[1]:
            return  # another model under the same name: not comparable
        if self._count == len(self._data):
            grown = np.zeros((2 * len(self._data), self._data.shape[1]), dtype=np.float32)
            grown[: self._count] = self._data
            self._data = grown
        self._data[self._count] = vector
        self._row_of[key] = self._count
        self._digest_of[key] = digest
        self._current.add((key, digest))
        self._count += 1

    def _remove(self, key: str) -> None:
        if self._row_of.pop(key, None) is not None:
            self._current.discard((key, self._digest_of.pop(key)))
            self._dead += 1

    @property
    def nbytes(self) -> int:
        """Bytes held by the vector rows."""
        return 0 if self._data is None else int(self._data.nbytes)

    # -- JournalIndex --------------------------------------------------------------------
    def _rows(self, candidates: Sequence[tuple[str, str]]) -> npt.NDArray[np.intp]:
        """Each candidate's row, -1 where it has no current vector."""
        self._ensure()
        row_of, current = self._row_of, self._current
        return np.fromiter(
            (row_of[kd[0]] if kd in current else -1 for kd in candidates),
            dtype=np.intp,
            count=len(candidates),
        )

    def rank(
        self,
        vector: npt.NDArray[np.float32],
        candidates: Sequence[tuple[str, str]],
        *,
        limit: int,
        threshold: float,
    ) -> Ranked:
        """Rank ``candidates`` by cosine similarity of their stored vectors to ``vector``."""
        rows = self._rows(candidates)
        scores = np.full(len(candidates), np.nan, dtype=np.float32)
        stored = rows >= 0
        if self._data is not None and stored.any():
            query = np.asarray(vector, dtype=np.float32)
            if query.shape[0] == self._data.shape[1]:
                if 2 * int(stored.sum()) < self._count:  # a small subset: gather its rows
                    scores[stored] = np.take(self._data, rows[stored], axis=0) @ query
                else:  # most rows: one product over all, no copy of them
                    scores[stored] = (self._data[: self._count] @ query)[rows[stored]]
        keys = [k for k, _ in candidates]
        hits, total = rank_candidates(keys, scores, limit=limit, threshold=threshold)
        missing = [keys[i] for i in np.flatnonzero(~stored).tolist()]
        return Ranked(hits, total, missing)

    def unembedded(self, candidates: Sequence[tuple[str, str]], *, limit: int) -> list[str]:
        """Up to ``limit`` keys of ``candidates`` without a current stored vector."""
        rows = self._rows(candidates)
        return [candidates[i][0] for i in np.flatnonzero(rows < 0)[: max(limit, 0)].tolist()]

    def stored_keys(self) -> set[str]:
        """Keys of every stored vector by this embedder."""
        self._ensure()
        return set(self._row_of)


async def embed_pending_entries(
    unit: Unit, index: JournalIndex, embedder: Embedder, *, batch: int
) -> dict[str, int]:
    """Store vectors for up to ``batch`` entries lacking a current one; drop orphans.

    One embedding call (awaited off the event loop) for the batch; the vectors are
    written in ``unit`` and committed with the caller's tick. Vectors of entries that
    no longer exist (auto-pruned) are deleted, up to ``batch`` per call.

    Returns:
        ``embedded`` and ``dropped`` counts.
    """
    entries = {e.record_key(): e for e in unit.all(JournalEntry)}
    candidates = [(key, entry_digest(e.content)) for key, e in entries.items()]
    keys = index.unembedded(candidates, limit=batch)
    if keys:
        texts = [entries[key].content for key in keys]
        vectors = await embed_async(embedder, texts)
        for key, text, vector in zip(keys, texts, vectors, strict=True):
            unit.put(
                EntryVector(
                    key=key,
                    embedder=embedder.name,
                    digest=entry_digest(text),
                    embedding=np.asarray(vector, dtype=np.float32).tobytes(),
                )
            )
    orphans = sorted(index.stored_keys() - entries.keys())[: max(batch, 0)]
    for key in orphans:
        unit.delete(EntryVector, key)
    return {"embedded": len(keys), "dropped": len(orphans)}
