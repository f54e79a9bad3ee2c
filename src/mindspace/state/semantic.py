"""The semantic-store port: search over one assistant's committed memories.

Retrieval (``recall_memories``, the prompt's semantic memories), consolidation's
duplicate checks, the night's A-MEM linking and the views all search memories through
a :class:`SemanticIndex`; nothing in the core scans every memory itself. Two
implementations stand behind the same contract tests (``tests/memory/test_semantic_port.py``):

- embedded (the default, SQLite): :class:`mindspace.memory.index.MemoryIndex`, an
  exact in-process index kept in step with the state cache;
- PostgreSQL: ``mindspace.storage.pg_semantic.PgSemanticIndex``, a pgvector column with
  an HNSW index and Postgres full-text search.

Writes do not go through the port: memories are records committed by the unit of work
(kind ``"memory"``). The embedded index hears of each commit (and of other processes'
commits, through the state cache's change feed) as a
:class:`~mindspace.state.committed.CacheListener`; the PostgreSQL index reads the database.

The scoring contract, shared by both: a :class:`Hit`'s ``relevance`` is the cosine
similarity of the memory's vector to the query's (None when either has no vector, or
the vectors come from another embedder), ``lexical`` is the memory's BM25 score for the
query text, and ``score`` in (0, 1) is the logistic of the two signals standardised per
query and mixed ``dense_weight : 1 - dense_weight``. Memories with no evidence at all
(no shared term, similarity <= 0) are never returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from mindspace.state.unit import StateCache

__all__ = [
    "EntryFilter",
    "Hit",
    "JournalIndex",
    "Neighbour",
    "Ranked",
    "Rankings",
    "SearchRequest",
    "SemanticIndex",
    "SemanticStore",
    "Vector",
    "rank_candidates",
]

Vector = npt.NDArray[np.float32]
"""A query or stored vector as the search ports take it (float32)."""


@dataclass(frozen=True)
class Hit:
    """One search result: the memory's key and how it scored."""

    key: str
    score: float
    relevance: float | None
    lexical: float


@dataclass(frozen=True)
class Neighbour:
    """A memory close to another one (A-MEM linking): its key and cosine similarity."""

    key: str
    score: float


@dataclass(frozen=True)
class Rankings:
    """A search's blended ranking and its two components, from one pass over the memories.

    Attributes:
        blended: What :meth:`SemanticIndex.search` returns, best first.
        dense: The best memories by dense similarity alone, best first: what
            :meth:`SemanticIndex.search` returns at ``dense_weight`` 1 (empty without a
            query vector).
        lexical: The best memories by BM25 alone, best first: what
            :meth:`SemanticIndex.search` returns at ``dense_weight`` 0, less the memories
            sharing no term with the query.
    """

    blended: list[Hit]
    dense: list[Hit]
    lexical: list[Hit]


@dataclass(frozen=True)
class SearchRequest:
    """What a memory search looks for: every :class:`SemanticIndex` search takes one.

    Attributes:
        text: The text BM25 scores against.
        vector: The query's embedding (None: lexical search only).
        min_trust: Leave out memories whose source trust is below this.
        tags: Keep only memories carrying every one of these tags (case-insensitive).
        dense_weight: The dense signal's share of the blend.
    """

    text: str
    vector: Vector | None = None
    min_trust: float = 0.0
    tags: Sequence[str] = ()
    dense_weight: float = 0.5


@runtime_checkable
class SemanticIndex(Protocol):
    """Search over the committed memories of one assistant.

    Every call costs O(log N) or O(k) in the number N of memories, apart from the exact
    embedded index's dense scan (one matrix-vector product, no Python loop over rows).
    """

    embedder: str | None
    """The embedder whose vectors are searched; others' vectors are left out of dense search."""

    @property
    def approximate(self) -> bool:
        """Whether a search may now miss a memory an exact search would rank.

        Recall then asks for fewer spare candidates (``APPROXIMATE_CANDIDATES``).
        """
        ...

    def search(self, request: SearchRequest, *, limit: int) -> list[Hit]:
        """The ``limit`` best memories for the ``request``, best first.

        Args:
            request: What to look for and how to weigh the two signals.
            limit: How many hits at most.
        """
        ...

    def rankings(self, request: SearchRequest, *, limit: int, depth: int) -> Rankings:
        """:meth:`search`'s hits with the ``depth`` best of each signal alone.

        The same answers as three searches (at the request's ``dense_weight``, 1 and 0)
        from the scores one search computes: recall fuses the three
        (:mod:`mindspace.memory.rank_fusion`). Without a query vector there is no dense
        ranking.

        Args:
            request: What to look for and how to weigh the two signals.
            limit: How many blended hits at most.
            depth: How many hits of each component at most.
        """
        ...

    def nearest(
        self, vectors: Vector, *, k: int, threshold: float, exclude: Sequence[str]
    ) -> list[list[Neighbour]]:
        """For each row of ``vectors``, up to ``k`` memories with cosine >= ``threshold``.

        Args:
            vectors: One vector per row (a 2-D array), made by :attr:`embedder`.
            k: How many neighbours per row at most.
            threshold: The least cosine similarity of a neighbour.
            exclude: For each row, the key never to return for it (the memory itself).

        Returns:
            One list per row, best first.
        """
        ...

    def count(self) -> int:
        """How many memories are indexed."""
        ...


@dataclass(frozen=True)
class Ranked:
    """What ranking journal entries by their stored vectors found.

    Attributes:
        hits: The best candidates with similarity >= the threshold, best first (ties in
            candidate order), at most the limit asked for.
        total: How many candidates reached the threshold (may exceed ``len(hits)``).
        unembedded: Candidate keys with no current stored vector by the index's
            embedder (never stored, stale since the entry's text changed, or made by
            another embedder), in candidate order: the caller embeds and scores these.
    """

    hits: list[Neighbour]
    total: int
    unembedded: list[str]


def rank_candidates(
    keys: Sequence[str], scores: npt.NDArray[np.float32], *, limit: int, threshold: float
) -> tuple[list[Neighbour], int]:
    """The ``limit`` best of ``keys`` by ``scores`` (NaN: unscored) at or above ``threshold``.

    Best first; ties keep the order of ``keys``. Both journal indexes rank through this,
    so the embedded and PostgreSQL backends order and count alike.

    Returns:
        The hits and how many keys reached the threshold.
    """
    passing = np.flatnonzero(scores >= np.float32(threshold))  # NaN never passes
    total = int(passing.size)
    if not total or limit <= 0:
        return [], total
    negated = -scores[passing]
    if limit < total:
        # Everything tied with the limit-th best survives, so the stable sort below
        # breaks ties exactly as a full stable sort would, over far fewer rows.
        cut = np.partition(negated, limit - 1)[limit - 1]
        near = np.flatnonzero(negated <= cut)
        passing, negated = passing[near], negated[near]
    chosen = passing[np.argsort(negated, kind="stable")[:limit]]
    return [Neighbour(keys[i], float(scores[i])) for i in chosen.tolist()], total


@dataclass(frozen=True)
class EntryFilter:
    """Which committed journal entries a :meth:`JournalIndex.search` looks at.

    Attributes:
        since: Only entries whose timestamp text is at least this (None: any).
        tags: Casefolded tags an entry must carry (every one, or any one with
            ``any_tag``); empty: no tag filter.
        any_tag: One of ``tags`` is enough.
        project: A casefolded project an entry must name among its related projects.
        exclude: Keys never to return (entries a unit of work replaced or deleted and
            has not committed; the caller ranks its own versions).
    """

    since: str | None = None
    tags: tuple[str, ...] = ()
    any_tag: bool = False
    project: str | None = None
    exclude: frozenset[str] = frozenset()


@runtime_checkable
class JournalIndex(Protocol):
    """Similarity search over the stored vectors of one assistant's journal entries.

    ``search_journal``'s semantic mode filters the entries first (tags, days, project),
    then ranks what passed here. Entry vectors are records (kind ``journal_vector``)
    written by the sleep cycle, each with the digest of the text it embedded
    (:func:`mindspace.journal.records.text_digest`); a vector is *current* while its
    entry exists and its text still has that digest. The index knows the entries itself,
    so no call costs a pass over every entry in Python.
    """

    embedder: str
    """The embedder whose vectors are ranked; vectors by another one are not current."""

    def rank(self, vector: Vector, keys: Sequence[str], *, limit: int, threshold: float) -> Ranked:
        """Rank the entries under ``keys`` by cosine similarity to ``vector``.

        Args:
            vector: The query's unit vector, made by :attr:`embedder`.
            keys: The candidate entries' keys, in tie-breaking order.
            limit: How many hits at most.
            threshold: The least similarity of a hit.
        """
        ...

    def search(self, vector: Vector, where: EntryFilter, *, limit: int, threshold: float) -> Ranked:
        """Rank the committed entries passing ``where`` by cosine similarity to ``vector``.

        The same answer as :meth:`rank` over those entries' keys newest first (by
        timestamp, then id), without a list of them: the filter runs in the index (array
        masks, or SQL), so a search costs no Python per entry.

        Args:
            vector: The query's unit vector, made by :attr:`embedder`.
            where: Which entries are candidates.
            limit: How many hits at most.
            threshold: The least similarity of a hit.

        Returns:
            Hits best first, ties newest first; ``unembedded`` newest first.
        """
        ...

    def unembedded(self, *, limit: int) -> list[str]:
        """Up to ``limit`` keys of entries without a current vector, oldest entry first."""
        ...

    def orphans(self, *, limit: int) -> list[str]:
        """Up to ``limit`` keys of stored vectors whose entry no longer exists."""
        ...


@runtime_checkable
class SemanticStore(Protocol):
    """A store that provides its own :class:`SemanticIndex` for each assistant.

    A store without one (a plugin's row store) gets the embedded index.
    """

    def semantic_index(self, cache: StateCache, embedder: str | None) -> SemanticIndex:
        """The index over the memories of the cache's assistant.

        Args:
            cache: The assistant's state cache in this process (an in-process index
                listens to it to stay in step with commits).
            embedder: The name of the embedder queries use (None: any vector of the
                matching size).
        """
        ...

    def journal_index(self, cache: StateCache, embedder: str) -> JournalIndex:
        """The similarity search over the cache's assistant's journal entry vectors.

        Args:
            cache: The assistant's state cache in this process.
            embedder: The name of the embedder whose vectors are ranked.
        """
        ...
