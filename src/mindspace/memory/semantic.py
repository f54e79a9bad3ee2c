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

from mindspace.clock import Clock
from mindspace.config import Settings
from mindspace.embeddings.port import Embedder, Vectors, embed_async
from mindspace.errors import NotFoundError
from mindspace.memory.drafts import DEFAULT_TRUST, MemoryDraft, MemoryState, Written
from mindspace.memory.judgement import ModelJudge
from mindspace.memory.lookup import aquery_vectors, query_vectors
from mindspace.memory.query import QueryRerank, carries, one_passage_each
from mindspace.memory.rank_fusion import COMPONENT_DEPTH, current_first, fuse_rankings
from mindspace.memory.recalled import Recalled, RecordReader, exact_relevance, page
from mindspace.memory.reconcile import distinct
from mindspace.memory.records import Memory
from mindspace.memory.writing import MemoryWriter, refuse_questions
from mindspace.state.semantic import Hit, Rankings, SearchRequest, SemanticIndex
from mindspace.state.unit import Unit

__all__ = [
    "APPROXIMATE_CANDIDATES",
    "CANDIDATES",
    "DEFAULT_TRUST",
    "MemoryDraft",
    "MemoryQuery",
    "MemoryState",
    "Recalled",
    "SemanticMemory",
    "Written",
]


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


class SemanticMemory:
    """Semantic memory operations within one unit of work.

    Args:
        unit: Where reads and writes go.
        clock: The time source.
        settings: Limits and thresholds.
        embedder: Makes the vectors (None: lexical search only).
        index: The assistant's committed-memory index.
        judge: The model asked about close calls when reconciling writes (the night).
    """

    def __init__(
        self,
        unit: Unit,
        clock: Clock,
        settings: Settings,
        embedder: Embedder | None,
        index: SemanticIndex,
        judge: ModelJudge | None = None,
    ) -> None:
        self.unit = unit
        self.clock = clock
        self.settings = settings
        self.embedder = embedder
        self.index = index
        self.judge = judge

    # -- writes (memory/writing.py: every draft reconciled with its nearest memories) ----
    def store(self, draft: MemoryDraft) -> Memory:
        """Store one memory (embedded now; blocking, see :meth:`astore`).

        Returns the new memory, or the one it restated (with one more source).
        """
        return self.store_many([draft])[0]

    async def astore(self, draft: MemoryDraft) -> Memory:
        """Store one memory; the embedding is awaited off the event loop."""
        return (await self.astore_many([draft]))[0]

    def store_many(self, drafts: Sequence[MemoryDraft]) -> list[Memory]:
        """Store several memories with one embedding batch (blocking: for sync callers).

        Each draft is reconciled with its nearest memories (:meth:`store_all`); the
        memory returned for a restatement is the one it restated.

        Raises:
            InvalidArgumentsError: empty or oversized content, trust outside 0-1,
                importance outside 1-10, or a question; nothing is stored then.
        """
        refuse_questions(drafts, self.settings)
        return [w.memory for w in self.store_all(drafts) if w.memory is not None]

    async def astore_many(self, drafts: Sequence[MemoryDraft]) -> list[Memory]:
        """:meth:`store_many` for the event loop: the embedding batch is awaited.

        Raises:
            InvalidArgumentsError: as :meth:`store_many`; checked before embedding.
        """
        refuse_questions(drafts, self.settings)
        return [w.memory for w in await self.astore_all(drafts) if w.memory is not None]

    def store_all(self, drafts: Sequence[MemoryDraft]) -> list[Written]:
        """Store ``drafts`` reconciled, saying what each one did (a question: refused).

        Raises:
            InvalidArgumentsError: empty or oversized content, trust outside 0-1, or
                importance outside 1-10; nothing is stored then.
        """
        return self._writer().write(drafts)

    async def astore_all(self, drafts: Sequence[MemoryDraft]) -> list[Written]:
        """:meth:`store_all` for the event loop (and the night's model on close calls)."""
        return await self._writer().awrite(drafts)

    def _writer(self) -> MemoryWriter:
        return MemoryWriter(
            self.unit, self.clock, self.settings, self.embedder, self.index, self.judge
        )

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
        asker: str | None = None,
    ) -> list[Recalled]:
        """The ``limit`` best memories for ``query``: dense and BM25 fused, best first.

        ``vector`` replaces the query's own embedding for the dense side (the prompt's
        speaker-aware lookups pass a blended one); BM25 always uses ``query``. ``asker``
        is who asks (the speaker being answered), when known: a query naming the asker
        is not about someone else, so their name raises nothing. Blocking while it
        embeds: on the event loop, await :meth:`arecall`.
        """
        if vector is None:
            vector = self.embed_query(query)
        return self._search(query, vector, limit, min_source_trust, tags, asker)

    async def arecall(
        self,
        query: str,
        *,
        limit: int = 10,
        min_source_trust: float = 0.0,
        tags: Sequence[str] = (),
        vector: Vectors | None = None,
        asker: str | None = None,
    ) -> list[Recalled]:
        """:meth:`recall` for the event loop: the query's embedding is awaited."""
        if vector is None:
            vector = await self.aembed_query(query)
        return self._search(query, vector, limit, min_source_trust, tags, asker)

    def _search(
        self,
        query: str,
        vector: Vectors | None,
        limit: int,
        min_source_trust: float,
        tags: Sequence[str],
        asker: str | None = None,
    ) -> list[Recalled]:
        # An index that searches approximately (the embedded one through its cells, at
        # 32,768 memories and more) hands the rules fewer candidates: see CANDIDATES.
        approximate = self.index.approximate
        spare = APPROXIMATE_CANDIDATES if approximate else CANDIDATES
        ranked = self._rankings(query, vector, limit + spare, min_source_trust, tags)
        # Each stage below reads records through one reader: none is read twice.
        records = RecordReader(self.unit)
        # Dates, questions and their neighbours (memory/query.py), on both backends alike.
        hits = QueryRerank.of(self.settings).apply(
            query,
            ranked.blended,
            records,
            lambda memory: exact_relevance(memory, vector, 0.0 if vector is not None else None),
            lambda memory: memory.source_trust >= min_source_trust and carries(memory, tags),
            asker=asker,
        )
        # A few spare results, so that leaving out restatements still fills the page.
        size = 2 * limit + _SPARE
        # The rules' ranking fused with dense and BM25 alone (memory/rank_fusion.py).
        hits = self._fused(hits, ranked, records, size)
        found = page(self.unit, query, vector, hits, size, min_source_trust, tags, records)
        threshold = self.settings.memory_restate_threshold
        shown = one_passage_each([r.memory for r in found], [r.lexical for r in found])
        found = [found[i] for i in shown]
        return [found[i] for i in distinct([r.memory for r in found], threshold, limit)]

    def _rankings(
        self,
        query: str,
        vector: Vectors | None,
        limit: int,
        min_source_trust: float,
        tags: Sequence[str],
    ) -> Rankings:
        """The index's blend, with dense and BM25 alone when fusion weighs them."""
        settings = self.settings
        dense_weight = settings.memory_dense_weight
        request = SearchRequest(query, vector, min_source_trust, tags, dense_weight)
        if settings.memory_recall_dense_rank_weight <= 0 and (
            settings.memory_recall_lexical_rank_weight <= 0
        ):
            return Rankings(self.index.search(request, limit=limit), [], [])
        return self.index.rankings(request, limit=limit, depth=COMPONENT_DEPTH)

    def _fused(
        self, hits: list[Hit], ranked: Rankings, records: RecordReader, size: int
    ) -> list[Hit]:
        """The rules' ranking fused with the components; the first ``size`` are the page's."""
        dense_weight = self.settings.memory_recall_dense_rank_weight
        lexical_weight = self.settings.memory_recall_lexical_rank_weight
        if not hits or (dense_weight <= 0 and lexical_weight <= 0):
            return hits
        dense = ranked.dense if dense_weight > 0 else []
        lexical = ranked.lexical if lexical_weight > 0 else []
        fused = fuse_rankings(hits, dense, lexical, dense_weight, lexical_weight)
        # Only the page's places matter, so only their records are read (the components'
        # own hits mostly rank below it). With this unit's writes pending, the page
        # ranks them in among every hit (memory/recalled.py): all are read then.
        within = None if self.unit.pending(Memory) else size
        read = records([h.key for h in fused[:within]])
        replaced = {key: memory.superseded_by for key, memory in read.items()}

        def successor(key: str) -> str | None:
            if key not in replaced:  # a successor from below the page, moved up
                found = records([key]).get(key)
                replaced[key] = found.superseded_by if found is not None else None
            return replaced[key]

        return current_first(fused, successor, within)

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
        skip_ref: str | None = None,
    ) -> list[Recalled]:
        """The spec's two stages: source trust >= the minimum, and relevance.

        Stage 1 keeps, per query, the memories whose relevance exceeds ``threshold``
        and lies within ``window`` of that query's best relevance (defaults: the
        ``memory_relevance_*`` settings). The floor alone cannot tell a paraphrased
        fact from the same person's other facts, which score nearly as high; the
        window keeps the clear winners and drops the crowd behind them. The trust
        filter applies first (spec 003 §1: both stages must hold, and the window is
        relative to the best *eligible* memory): an overheard memory scoring higher
        than a trusted one must not push it out of the window and leave nothing.
        Memories whose ``ref`` is ``skip_ref`` (the words of the message being answered,
        formed a moment ago) are not looked at. Blocking while it embeds: on the event
        loop, await :meth:`aretrieve_relevant`.
        """
        asked = _asked(queries)
        vectors = [self.query_vector(q) for q in asked]
        return self._relevant(asked, vectors, min_source_trust, limit, threshold, window, skip_ref)

    async def aretrieve_relevant(
        self,
        queries: Sequence[str | MemoryQuery],
        *,
        min_source_trust: float = 0.5,
        limit: int = 5,
        threshold: float | None = None,
        window: float | None = None,
        skip_ref: str | None = None,
    ) -> list[Recalled]:
        """:meth:`retrieve_relevant` for the event loop: one embedding batch, awaited."""
        asked = _asked(queries)
        vectors = await self.aquery_vectors(asked)
        return self._relevant(asked, vectors, min_source_trust, limit, threshold, window, skip_ref)

    def _relevant(
        self,
        asked: Sequence[MemoryQuery],
        vectors: Sequence[Vectors | None],
        min_source_trust: float,
        limit: int,
        threshold: float | None,
        window: float | None,
        skip_ref: str | None,
    ) -> list[Recalled]:
        cut = self.settings.memory_relevance_threshold if threshold is None else threshold
        span = self.settings.memory_relevance_window if window is None else window
        best: dict[str, Recalled] = {}
        for query, vector in zip(asked, vectors, strict=True):
            # Source trust filters inside the search, before the window is measured.
            found = self._search(query.text, vector, limit * 4, min_source_trust, ())
            scored = [
                (item, _relevance(item))
                for item in found
                if skip_ref is None or item.memory.ref != skip_ref
            ]
            top = max((relevance for _, relevance in scored), default=0.0)
            for item, relevance in scored:
                if relevance <= cut or relevance < top - span:  # relevance, among trusted
                    continue
                known = best.get(item.memory.id)
                if known is None or (known.relevance or 0.0) < relevance:
                    best[item.memory.id] = Recalled(
                        item.memory, item.score, relevance, item.lexical
                    )
        self._bring_in_current(best, min_source_trust, skip_ref)
        # Current facts before replaced ones (a replaced fact is history: "used to").
        ranked = sorted(best.values(), key=lambda r: (not r.memory.current, -(r.relevance or 0.0)))
        return ranked[:limit]

    def _bring_in_current(
        self, best: dict[str, Recalled], min_source_trust: float, skip_ref: str | None
    ) -> None:
        """Add the fact that replaced a relevant one, as relevant as it, when it is missing.

        "Where do I live?" is closer to "I live in Paris" than to "I moved to Berlin":
        without this the prompt would show only the fact that no longer holds.
        """
        replaced = [r for r in best.values() if r.memory.superseded_by]
        for _ in range(_CHAIN):
            wanted = {
                r.memory.superseded_by: r
                for r in replaced
                if r.memory.superseded_by and r.memory.superseded_by not in best
            }
            if not wanted:
                return
            found = self.unit.get_many(Memory, list(wanted))
            replaced = []
            for key, older in wanted.items():
                newer = found.get(key)
                if newer is None or newer.source_trust < min_source_trust:
                    continue
                if skip_ref is not None and newer.ref == skip_ref:
                    continue
                best[key] = Recalled(newer, older.score, older.relevance, older.lexical)
                replaced.append(best[key])


CANDIDATES = 50
"""Hits beyond the page the query rules re-rank (a date, a question, a speaker's next
turn can lift a memory from below the page into it)."""

APPROXIMATE_CANDIDATES = 25
""":data:`CANDIDATES` when the index searches approximately (through cells, from 32,768
memories): each candidate costs a record read, and at that size the reads and rules were
a sixth of an awake tick. At 100k memories a recall's top 10 shared as much with the
exact search's with 50, 25 or 15 (0.9955 of random queries', 0.9905 of paraphrases';
bench/RESULTS.md, "The awake tick at 100k, round 5"); a memory the rules would lift from
deeper (a date asked about, below the first 25 past the page) is missed."""

_SPARE = 5
"""Results beyond the page read to replace restatements left out of it (and as many
again as the page: other passages of a long message shown are left out too)."""


def _asked(queries: Sequence[str | MemoryQuery]) -> list[MemoryQuery]:
    """The non-blank queries as :class:`MemoryQuery`."""
    asked = [q if isinstance(q, MemoryQuery) else MemoryQuery(q) for q in queries]
    return [q for q in asked if q.text.strip()]


_CHAIN = 3
"""How many updates of one fact are followed to the current one."""


def _relevance(found: Recalled) -> float:
    """Stage 1's score: cosine similarity, or saturated BM25 without an embedder."""
    if found.relevance is not None:
        return found.relevance
    return found.lexical / (found.lexical + 5.0)
