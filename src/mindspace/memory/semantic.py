"""Semantic memory (tier 1): store, delete, hybrid recall and two-stage retrieval.

The engine runs on an event loop, so it uses the ``a``-prefixed methods (``astore``,
``arecall``, ...): they await the embedder through
:func:`~mindspace.embeddings.port.embed_async` (off the loop), then read and write the
unit of work on the loop thread. The sync methods call ``Embedder.embed`` directly and
are for sync callers only (the LoCoMo benchmark, scripts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mindspace.clock import Clock, format_time
from mindspace.config import Settings
from mindspace.embeddings.port import Embedder, Vectors, embed_async
from mindspace.errors import InvalidArgumentsError, NotFoundError
from mindspace.memory.index import rrf
from mindspace.memory.lexical import tokenize
from mindspace.memory.lookup import aquery_vectors, query_vectors
from mindspace.memory.query import QueryRerank, carries
from mindspace.memory.records import Memory, SourceType, memory_key
from mindspace.state.models import Document
from mindspace.state.semantic import Hit, SemanticIndex
from mindspace.state.unit import Unit
from mindspace.workspace.limits import bounded_text

__all__ = [
    "DEFAULT_TRUST",
    "MemoryDraft",
    "MemoryQuery",
    "MemoryState",
    "Recalled",
    "SemanticMemory",
]

DEFAULT_TRUST: dict[str, float] = {
    "direct": 0.9,
    "observation": 0.8,
    "inference": 0.6,
    "environmental": 0.3,
}


class MemoryState(Document):
    """Counters of the semantic memory."""

    name: ClassVar[str] = "memory_state"

    next_id: int = 0
    forgotten: tuple[str, ...] = ()
    """Memories deleted since the night last pruned the A-MEM links that point to them."""


@dataclass(frozen=True)
class MemoryDraft:
    """What to store as a memory; the id, times and vector are added when stored."""

    content: str
    tags: Sequence[str] = ()
    source_type: SourceType = "observation"
    source_trust: float | None = None
    source_entity: str | None = None
    importance: int = 5
    importance_method: str = "manual"
    source: str = "tool"
    entry_id: int | None = None
    occurred_at: str | None = None
    ref: str | None = None
    context: str | None = None


def _check(draft: MemoryDraft) -> None:
    trust = draft.source_trust
    if trust is not None and not 0.0 <= trust <= 1.0:
        raise InvalidArgumentsError(
            f"source_trust must be between 0 and 1, not {trust!r}",
            "Use 0.9 for direct statements, 0.8 observations, 0.6 inferences, 0.3 overheard.",
        )
    if not 1 <= draft.importance <= 10:
        raise InvalidArgumentsError(
            f"importance must be 1-10, not {draft.importance!r}",
            "Rate from 1 (mundane) to 10 (major).",
        )
    if draft.source_type not in DEFAULT_TRUST:
        raise InvalidArgumentsError(
            f"Unknown source_type {draft.source_type!r}",
            f"Use one of {sorted(DEFAULT_TRUST)!r}.",
        )


@dataclass(frozen=True)
class MemoryQuery:
    """What the prompt looks memories up by: a text and, for a message, who said it.

    Memories from an entity are searched by ``"<entity>: <content>"``; a message from
    the same entity is looked up the same way, so "do you remember I'm allergic to
    oak?" from Alice meets "Alice is allergic to oak" (the plain text alone does not
    say who "I" is).
    """

    text: str
    speaker: str | None = None


@dataclass(frozen=True)
class Recalled:
    """A memory with the scores that ranked it."""

    memory: Memory
    score: float
    relevance: float | None = None
    lexical: float = 0.0

    def to_result(self) -> dict[str, object]:
        """The memory as ``recall_memories`` returns it."""
        return {
            "id": self.memory.id,
            "content": self.memory.content,
            "score": self.score,
            "relevance": None if self.relevance is None else round(self.relevance, 4),
            "metadata": self.memory.metadata(),
        }


class SemanticMemory:
    """Semantic memory operations within one unit of work.

    Args:
        unit: Where reads and writes go.
        clock: The time source.
        settings: Limits and thresholds.
        embedder: Makes the vectors (None: lexical search only).
        index: The assistant's committed-memory index.
    """

    def __init__(
        self,
        unit: Unit,
        clock: Clock,
        settings: Settings,
        embedder: Embedder | None,
        index: SemanticIndex,
    ) -> None:
        self.unit = unit
        self.clock = clock
        self.settings = settings
        self.embedder = embedder
        self.index = index

    # -- writes --------------------------------------------------------------------------
    def store(self, draft: MemoryDraft) -> Memory:
        """Store one memory (embedded now; blocking, see :meth:`astore`)."""
        return self.store_many([draft])[0]

    async def astore(self, draft: MemoryDraft) -> Memory:
        """Store one memory; the embedding is awaited off the event loop."""
        return (await self.astore_many([draft]))[0]

    def store_many(self, drafts: Sequence[MemoryDraft]) -> list[Memory]:
        """Store several memories with one embedding batch (blocking: for sync callers).

        Raises:
            InvalidArgumentsError: empty or oversized content, trust outside 0-1, or
                importance outside 1-10; nothing is stored then.
        """
        texts, keys = self._prepare(drafts)
        vectors = self.embedder.embed(keys) if self.embedder is not None and texts else None
        return self._put(drafts, texts, vectors)

    async def astore_many(self, drafts: Sequence[MemoryDraft]) -> list[Memory]:
        """:meth:`store_many` for the event loop: the embedding batch is awaited.

        Raises:
            InvalidArgumentsError: as :meth:`store_many`; checked before embedding.
        """
        texts, keys = self._prepare(drafts)
        embedder = self.embedder
        vectors = await embed_async(embedder, keys) if embedder is not None and texts else None
        return self._put(drafts, texts, vectors)

    def _prepare(self, drafts: Sequence[MemoryDraft]) -> tuple[list[str], list[str]]:
        """The drafts' checked contents and their embedding keys."""
        texts = [bounded_text(d.content, "content", self.settings.max_memory_chars) for d in drafts]
        for draft in drafts:
            _check(draft)
        keys = [memory_key(t, d.source_entity) for t, d in zip(texts, drafts, strict=True)]
        return texts, keys

    def _put(
        self, drafts: Sequence[MemoryDraft], texts: Sequence[str], vectors: Vectors | None
    ) -> list[Memory]:
        now = format_time(self.clock.now())
        state = self.unit.doc(MemoryState)
        memories = []
        for i, (draft, text) in enumerate(zip(drafts, texts, strict=True)):
            trust = draft.source_trust
            memory = Memory(
                id=f"mem_{state.next_id + i + 1}",
                content=text,
                source=draft.source,
                entry_id=draft.entry_id,
                tags=tuple(draft.tags),
                source_type=draft.source_type,
                source_trust=DEFAULT_TRUST[draft.source_type] if trust is None else trust,
                source_entity=draft.source_entity,
                importance=draft.importance,
                importance_method=draft.importance_method,
                created_at=now,
                occurred_at=draft.occurred_at or now,
                ref=draft.ref,
                context=draft.context,
                embedder=self.embedder.name if self.embedder is not None else None,
                embedding=vectors[i].astype(np.float32).tobytes() if vectors is not None else None,
            )
            self.unit.put(memory)
            memories.append(memory)
        self.unit.put_doc(state.model_copy(update={"next_id": state.next_id + len(drafts)}))
        return memories

    def delete(self, memory_id: str) -> None:
        """Delete a memory.

        Raises:
            NotFoundError: no such memory.
        """
        if self.unit.get(Memory, memory_id) is None:
            raise NotFoundError(f"Memory {memory_id!r} does not exist", "Check the memory id.")
        self.unit.delete(Memory, memory_id)
        # Links from other memories to this one are pruned by the night (dreaming).
        state = self.unit.doc(MemoryState)
        self.unit.put_doc(state.model_copy(update={"forgotten": (*state.forgotten, memory_id)}))

    def get(self, memory_id: str) -> Memory | None:
        """One memory by id."""
        return self.unit.get(Memory, memory_id)

    # -- reads ---------------------------------------------------------------------------
    def embed_query(self, query: str) -> Vectors | None:
        """The query's vector (None without an embedder; blocking)."""
        if self.embedder is None:
            return None
        vector: Vectors = self.embedder.embed([query])[0]
        return vector

    async def aembed_query(self, query: str) -> Vectors | None:
        """The query's vector (None without an embedder), awaited off the event loop."""
        if self.embedder is None:
            return None
        vector: Vectors = (await embed_async(self.embedder, [query]))[0]
        return vector

    def recall(
        self,
        query: str,
        *,
        limit: int = 10,
        min_source_trust: float = 0.0,
        tags: Sequence[str] = (),
        vector: Vectors | None = None,
    ) -> list[Recalled]:
        """The ``limit`` best memories for ``query``: dense and BM25 fused, best first.

        ``vector`` replaces the query's own embedding for the dense side (the prompt's
        speaker-aware lookups pass a blended one); BM25 always uses ``query``. Blocking
        while it embeds: on the event loop, await :meth:`arecall`.
        """
        if vector is None:
            vector = self.embed_query(query)
        return self._search(query, vector, limit, min_source_trust, tags)

    async def arecall(
        self,
        query: str,
        *,
        limit: int = 10,
        min_source_trust: float = 0.0,
        tags: Sequence[str] = (),
        vector: Vectors | None = None,
    ) -> list[Recalled]:
        """:meth:`recall` for the event loop: the query's embedding is awaited."""
        if vector is None:
            vector = await self.aembed_query(query)
        return self._search(query, vector, limit, min_source_trust, tags)

    def _search(
        self,
        query: str,
        vector: Vectors | None,
        limit: int,
        min_source_trust: float,
        tags: Sequence[str],
    ) -> list[Recalled]:
        hits = self.index.search(
            query,
            vector,
            limit=limit + 50,
            min_trust=min_source_trust,
            tags=tags,
            dense_weight=self.settings.memory_dense_weight,
        )
        # Dates, questions and their neighbours (memory/query.py), on both backends alike.
        hits = QueryRerank.of(self.settings).apply(
            query,
            hits,
            lambda keys: self.unit.get_many(Memory, keys),
            lambda memory: _exact(memory, vector, 0.0 if vector is not None else None),
            lambda memory: memory.source_trust >= min_source_trust and carries(memory, tags),
        )
        return self._merge_pending(query, vector, hits, limit, min_source_trust, tags)

    def query_vector(self, query: MemoryQuery) -> Vectors | None:
        """The dense vector of a prompt lookup (None without an embedder; blocking).

        With a speaker it blends the embeddings of ``"<speaker>: <text>"`` and of the
        plain text (``memory_speaker_query_weight`` to the first), so a memory's
        relevance is the same blend of its two cosine similarities: the speaker-aware
        side finds what this person told us, the plain side tells apart their facts by
        topic.
        """
        if self.embedder is None:
            return None
        weight = self.settings.memory_speaker_query_weight
        return query_vectors(self.embedder, [query], weight)[0]

    async def aquery_vectors(self, queries: Sequence[MemoryQuery]) -> list[Vectors | None]:
        """:meth:`query_vector` of every query, in one embedding batch awaited off the loop.

        One text per lookup is embedded (memory/lookup.py): the plain side of a
        speaker's lookup comes from the embedder's cache or from the keyed text.
        """
        if self.embedder is None or not queries:
            return [None] * len(queries)
        weight = self.settings.memory_speaker_query_weight
        return list(await aquery_vectors(self.embedder, queries, weight))

    def retrieve_relevant(
        self,
        queries: Sequence[str | MemoryQuery],
        *,
        min_source_trust: float = 0.5,
        limit: int = 5,
        threshold: float | None = None,
        window: float | None = None,
    ) -> list[Recalled]:
        """The spec's two stages: relevance, then source trust >= the minimum.

        Stage 1 keeps, per query, the memories whose relevance exceeds ``threshold``
        and lies within ``window`` of that query's best relevance (defaults: the
        ``memory_relevance_*`` settings). The floor alone cannot tell a paraphrased
        fact from the same person's other facts, which score nearly as high; the
        window keeps the clear winners and drops the crowd behind them. Blocking while
        it embeds: on the event loop, await :meth:`aretrieve_relevant`.
        """
        asked = _asked(queries)
        vectors = [self.query_vector(q) for q in asked]
        return self._relevant(asked, vectors, min_source_trust, limit, threshold, window)

    async def aretrieve_relevant(
        self,
        queries: Sequence[str | MemoryQuery],
        *,
        min_source_trust: float = 0.5,
        limit: int = 5,
        threshold: float | None = None,
        window: float | None = None,
    ) -> list[Recalled]:
        """:meth:`retrieve_relevant` for the event loop: one embedding batch, awaited."""
        asked = _asked(queries)
        vectors = await self.aquery_vectors(asked)
        return self._relevant(asked, vectors, min_source_trust, limit, threshold, window)

    def _relevant(
        self,
        asked: Sequence[MemoryQuery],
        vectors: Sequence[Vectors | None],
        min_source_trust: float,
        limit: int,
        threshold: float | None,
        window: float | None,
    ) -> list[Recalled]:
        cut = self.settings.memory_relevance_threshold if threshold is None else threshold
        span = self.settings.memory_relevance_window if window is None else window
        best: dict[str, Recalled] = {}
        for query, vector in zip(asked, vectors, strict=True):
            found = self._search(query.text, vector, limit * 4, 0.0, ())
            scored = [(item, _relevance(item)) for item in found]
            top = max((relevance for _, relevance in scored), default=0.0)
            for item, relevance in scored:
                if relevance <= cut or relevance < top - span:  # stage 1: relevance
                    continue
                if item.memory.source_trust < min_source_trust:  # stage 2: source trust
                    continue
                known = best.get(item.memory.id)
                if known is None or (known.relevance or 0.0) < relevance:
                    best[item.memory.id] = Recalled(
                        item.memory, item.score, relevance, item.lexical
                    )
        ranked = sorted(best.values(), key=lambda r: -(r.relevance or 0.0))
        return ranked[:limit]

    def _merge_pending(
        self,
        query: str,
        vector: Vectors | None,
        hits: list[Hit],
        limit: int,
        min_trust: float,
        tags: Sequence[str],
    ) -> list[Recalled]:
        pending = self.unit.pending(Memory)
        committed = [h for h in hits if h.key not in pending]
        fresh = [
            m
            for m in pending.values()
            if m is not None and m.source_trust >= min_trust and all(t in m.tags for t in tags)
        ]
        if not fresh:
            # One read for the page (memories are a lazy kind: each miss is a query).
            found = self.unit.get_many(Memory, [h.key for h in committed[:limit]])
            return [
                Recalled(m, h.score, _exact(m, vector, h.relevance), h.lexical)
                for h in committed[:limit]
                if (m := found.get(h.key)) is not None
            ]
        # Memories written earlier in this unit are not in the index yet: rank them too.
        terms = set(tokenize(query))
        scored = []
        for memory in fresh:
            v = memory.vector()
            cosine = float(v @ vector) if v is not None and vector is not None else None
            overlap = float(len(terms & set(tokenize(memory.lexical_key()))))
            scored.append((memory, cosine, overlap))
        by_key = {m.id: (m, c, o) for m, c, o in scored}
        dense_rank = [
            m.id for m, c, _ in sorted(scored, key=lambda s: -(s[1] or -1.0)) if c is not None
        ]
        lexical_rank = [m.id for m, _, o in sorted(scored, key=lambda s: -s[2]) if o > 0]
        fused = rrf([[h.key for h in committed], dense_rank, lexical_rank])
        ordered = sorted(fused.items(), key=lambda item: -item[1])[:limit]
        best = 3.0 / (60 + 1)
        committed_by_key = {h.key: h for h in committed}
        loaded = self.unit.get_many(Memory, [k for k, _ in ordered if k not in by_key])
        results = []
        for key, value in ordered:
            if key in by_key:
                memory, cosine, overlap = by_key[key]
                results.append(Recalled(memory, round(value / best, 6), cosine, overlap))
            elif (memory_c := loaded.get(key)) is not None:
                hit = committed_by_key[key]
                relevance = _exact(memory_c, vector, hit.relevance)
                results.append(Recalled(memory_c, round(value / best, 6), relevance, hit.lexical))
        return results


def _exact(memory: Memory, vector: Vectors | None, indexed: float | None) -> float | None:
    """The exact similarity of a returned memory (the index ranks on int8 codes).

    Only for a hit the index scored densely (``indexed`` is not None: same embedder and
    size), recomputed from the memory's stored float32 vector.
    """
    if indexed is None or vector is None:
        return indexed
    own = memory.vector()
    if own is None or own.shape != vector.shape:
        return indexed
    return float(own @ vector)


def _asked(queries: Sequence[str | MemoryQuery]) -> list[MemoryQuery]:
    """The non-blank queries as :class:`MemoryQuery`."""
    asked = [q if isinstance(q, MemoryQuery) else MemoryQuery(q) for q in queries]
    return [q for q in asked if q.text.strip()]


def _relevance(found: Recalled) -> float:
    """Stage 1's score: cosine similarity, or saturated BM25 without an embedder."""
    if found.relevance is not None:
        return found.relevance
    return found.lexical / (found.lexical + 5.0)
