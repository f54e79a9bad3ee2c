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

import heapq
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from mindspace.embeddings.port import Embedder, embed_async
from mindspace.journal.columns import EntryColumns
from mindspace.journal.records import EntryVector, JournalEntry, text_digest
from mindspace.state.models import Record
from mindspace.state.semantic import (
    EntryFilter,
    JournalIndex,
    Neighbour,
    Ranked,
    Vector,
    rank_candidates,
)
from mindspace.state.unit import StateCache, Unit

__all__ = ["EntryVectorIndex", "embed_pending_entries"]

_FIELDS = ("key", "embedder", "digest", "embedding")


class _Entries:
    """Hears the journal's entry commits for :class:`EntryVectorIndex` (one kind a listener)."""

    def __init__(self, index: EntryVectorIndex) -> None:
        self._index = index

    def applied(self, key: str, record: Record | None) -> None:
        self._index.entry_applied(key, record)

    def reset(self) -> None:
        self._index.reset()


class EntryVectorIndex:
    """The stored vectors of one assistant's journal entries by one embedder, in memory.

    Rows are float32 (``4 * dim`` bytes per entry: 15 MB for 10,000 entries of 384
    dimensions), appended in place and compacted when half of them are dead; the
    entries' filter columns sit beside them as arrays (:class:`EntryColumns`), so
    :meth:`search` filters and ranks with array operations only. Built on
    first use from the store's ``journal_vector`` rows and the cache's entries; two
    listeners on the state cache (vectors and entries) keep it in step with this
    process's and other processes' commits, including which entries lack a current
    vector, so the sleep step finds its batch in O(batch).

    Args:
        cache: The assistant's state cache.
        embedder: The embedder whose vectors are ranked (others' are not loaded).
    """

    def __init__(self, cache: StateCache, embedder: str) -> None:
        self._cache = cache
        self.embedder = embedder
        self._built = False
        cache.listen(EntryVector.kind, self)
        cache.listen(JournalEntry.kind, _Entries(self))
        self._clear()

    def _clear(self) -> None:
        self._row_of: dict[str, int] = {}
        self._vector_digest: dict[str, str] = {}
        self._entry_digest: dict[str, str] = {}
        self._current: dict[str, int] = {}
        """Row of each entry whose stored vector matches its text: one lookup a candidate."""
        self._columns = EntryColumns()
        """Each entry's filter columns and the row of its current vector (-1: none)."""
        self._pending: set[str] = set()
        """Entries without a current vector."""
        self._age: dict[str, int] = {}
        """Each entry's place in the order entries were stored (oldest first)."""
        self._data: npt.NDArray[np.float32] | None = None
        self._count = 0
        self._dead = 0

    # -- CacheListener (vectors) -----------------------------------------------------------
    def applied(self, key: str, record: Record | None) -> None:
        """Apply one committed vector write (None: a delete)."""
        if not self._built:
            return  # built on first use from the store, which already holds this write
        self._remove(key)
        if isinstance(record, EntryVector):
            self._add(record.key, record.embedder, record.digest, record.embedding)
        self._settle(key)
        if self._dead > 64 and 2 * self._dead > self._count:
            self.reset()

    def entry_applied(self, key: str, record: Record | None) -> None:
        """Apply one committed journal entry write (None: a delete)."""
        if not self._built:
            return
        if isinstance(record, JournalEntry):
            self._entry_digest[key] = text_digest(record.content)
            self._age.setdefault(key, len(self._age))
            self._columns.put(key, record)
        else:
            self._entry_digest.pop(key, None)
            self._age.pop(key, None)
            self._columns.drop(key)
        self._settle(key)

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
        for key, entry in self._cache.records(JournalEntry).items():  # stored order
            self._entry_digest[key] = text_digest(entry.content)
            self._age[key] = len(self._age)
            self._columns.put(key, entry)
        for key in self._entry_digest:
            self._settle(key)
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
        self._vector_digest[key] = digest
        self._count += 1

    def _remove(self, key: str) -> None:
        if self._row_of.pop(key, None) is not None:
            self._vector_digest.pop(key, None)
            self._dead += 1

    def _settle(self, key: str) -> None:
        """Recompute whether ``key``'s entry has a current vector, or needs one."""
        digest = self._entry_digest.get(key)
        self._current.pop(key, None)
        self._pending.discard(key)
        if digest is None:
            return  # no entry (any vector left is an orphan)
        entry_row = self._columns.row_of[key]
        if self._vector_digest.get(key) == digest:
            self._current[key] = self._columns.vector_row[entry_row] = self._row_of[key]
        else:
            self._columns.vector_row[entry_row] = -1
            self._pending.add(key)

    @property
    def nbytes(self) -> int:
        """Bytes held by the vector rows and the entries' column arrays."""
        vectors = 0 if self._data is None else int(self._data.nbytes)
        return vectors + self._columns.nbytes

    # -- JournalIndex --------------------------------------------------------------------
    def rank(self, vector: Vector, keys: Sequence[str], *, limit: int, threshold: float) -> Ranked:
        """Rank the entries under ``keys`` by cosine similarity of their stored vectors."""
        self._ensure()
        current = self._current
        rows = np.fromiter((current.get(k, -1) for k in keys), dtype=np.intp, count=len(keys))
        scores = np.full(len(keys), np.nan, dtype=np.float32)
        stored = rows >= 0
        if self._data is not None and stored.any():
            query = np.asarray(vector, dtype=np.float32)
            if query.shape[0] == self._data.shape[1]:
                if 2 * int(stored.sum()) < self._count:  # a small subset: gather its rows
                    scores[stored] = np.take(self._data, rows[stored], axis=0) @ query
                else:  # most rows: one product over all, no copy of them
                    scores[stored] = (self._data[: self._count] @ query)[rows[stored]]
        hits, total = rank_candidates(keys, scores, limit=limit, threshold=threshold)
        missing = [keys[i] for i in np.flatnonzero(~stored).tolist()]
        return Ranked(hits, total, missing)

    def search(self, vector: Vector, where: EntryFilter, *, limit: int, threshold: float) -> Ranked:
        """Rank the entries passing ``where`` by cosine similarity of their stored vectors.

        Array masks pick the candidate rows, one matrix-vector product scores those with
        a current vector, a partial sort finds the best; Python touches only the hits
        (and the entries with no current vector, which the caller embeds).
        """
        self._ensure()
        columns = self._columns
        rows = columns.matching(where)
        vector_rows = columns.vector_row[rows]
        stored = vector_rows >= 0
        unembedded = [columns.keys[r] for r in columns.newest_first(rows[~stored]).tolist()]
        rows, vector_rows = rows[stored], vector_rows[stored]
        if self._data is None or not rows.size:
            return Ranked([], 0, unembedded)
        query = np.asarray(vector, dtype=np.float32)
        if query.shape[0] != self._data.shape[1]:
            return Ranked([], 0, unembedded)  # cannot happen: stored rows share the dim
        # The same two ways as rank, chosen alike, so the scores are the same bits.
        if 2 * rows.size < self._count:  # a small subset: gather its rows
            scores = np.take(self._data, vector_rows, axis=0) @ query
        else:  # most rows: one product over all, no copy of them
            scores = (self._data[: self._count] @ query)[vector_rows]
        passing = np.flatnonzero(scores >= np.float32(threshold))
        total = int(passing.size)
        if not total or limit <= 0:
            return Ranked([], total, unembedded)
        if limit < total:
            # Everything tied with the limit-th best survives, so the order below breaks
            # ties among them exactly as a full sort would.
            cut = np.partition(-scores[passing], limit - 1)[limit - 1]
            passing = passing[-scores[passing] <= cut]
        chosen = rows[passing]
        # Best first, ties newest first: an ascending sort by (score, time, id) reversed.
        order = np.lexsort((columns.ids[chosen], columns.times[chosen], scores[passing]))
        best = order[::-1][:limit]
        hits = [
            Neighbour(columns.keys[int(chosen[i])], float(scores[passing[i]]))
            for i in best.tolist()
        ]
        return Ranked(hits, total, unembedded)

    def unembedded(self, *, limit: int) -> list[str]:
        """Up to ``limit`` keys of entries without a current vector, oldest first."""
        self._ensure()
        # Few entries wait between nights; after an import or an embedder change many
        # do, and picking the oldest of P costs O(P log limit) then.
        return heapq.nsmallest(max(limit, 0), self._pending, key=self._age.__getitem__)

    def orphans(self, *, limit: int) -> list[str]:
        """Up to ``limit`` keys of stored vectors whose entry no longer exists."""
        self._ensure()
        entries = self._entry_digest
        return [k for k in self._row_of if k not in entries][: max(limit, 0)]


async def embed_pending_entries(
    unit: Unit, index: JournalIndex, embedder: Embedder, *, batch: int
) -> dict[str, int]:
    """Store vectors for up to ``batch`` entries lacking a current one; drop orphans.

    One embedding call (awaited off the event loop) for the batch; the vectors are
    written in ``unit`` and committed with the caller's tick. Vectors of entries that
    no longer exist (auto-pruned) are deleted, up to ``batch`` per call. The index finds
    both lists itself, so a call costs O(batch) on either backend's side of Python.

    Returns:
        ``embedded`` and ``dropped`` counts.
    """
    keys = index.unembedded(limit=batch)
    entries = unit.get_many(JournalEntry, keys)
    if entries:
        texts = [entry.content for entry in entries.values()]
        vectors = await embed_async(embedder, texts)
        for (key, entry), vector in zip(entries.items(), vectors, strict=True):
            unit.put(
                EntryVector(
                    key=key,
                    embedder=embedder.name,
                    digest=text_digest(entry.content),
                    embedding=np.asarray(vector, dtype=np.float32).tobytes(),
                )
            )
    orphans = index.orphans(limit=batch)
    for key in orphans:
        unit.delete(EntryVector, key)
    return {"embedded": len(entries), "dropped": len(orphans)}
