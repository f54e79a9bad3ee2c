"""Writing memories: every draft reconciled with the memories nearest it, then stored.

:class:`MemoryWriter` is the one write path of semantic memory
(:class:`~mindspace.memory.semantic.SemanticMemory` delegates to it): it checks and
embeds the drafts, finds each one's nearest memories (the index's committed ones, and
those written earlier in the same unit of work, this batch included), lets the rules of
:mod:`mindspace.memory.reconcile` (and at night the model, :mod:`mindspace.memory.judgement`)
decide, and applies the decision: a new memory, one more source of an existing one, or a
new memory that ends the validity of the one it replaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from mindspace.clock import Clock, format_time
from mindspace.config import Settings
from mindspace.embeddings.port import Embedder, Vectors, embed_async
from mindspace.errors import InvalidArgumentsError
from mindspace.memory.drafts import DEFAULT_TRUST, MemoryDraft, MemoryState, Written, check_draft
from mindspace.memory.judgement import ModelJudge
from mindspace.memory.reconcile import Decision, Fact, Near, ReconcileRules
from mindspace.memory.records import MAX_SOURCES, Memory, MemorySource, memory_key
from mindspace.memory.utterance import is_question
from mindspace.state.semantic import SearchRequest, SemanticIndex
from mindspace.state.unit import Unit
from mindspace.text import normalized
from mindspace.workspace.limits import bounded_text

__all__ = ["MemoryWriter", "refuse_questions", "rules_of"]

QUOTE_CANDIDATES = 5
"""Memories found by a write-up's words, besides its nearest by vector."""
NEAREST = 20
"""How many committed neighbours each draft is read with (any speaker: many people say
the same words, and only the draft's own speaker's memories can be restated or replaced)."""
NEAREST_NEW = 5
"""How many of this unit's new memories each draft is compared with."""

Done = Literal["added", "restated", "updated", "refused"]


def rules_of(settings: Settings) -> ReconcileRules:
    """The reconcile rules with the thresholds the ``memory_*`` settings ask for."""
    return ReconcileRules(
        same_threshold=settings.memory_restate_threshold,
        update_threshold=settings.memory_update_threshold,
    )


@dataclass
class MemoryWriter:
    """Stores drafts as memories within one unit of work, reconciled (see module doc).

    Attributes:
        unit: Where reads and writes go.
        clock: The time source.
        settings: Limits and thresholds (``memory_reconcile`` off: every draft is added).
        embedder: Makes the vectors (None: restatements are found by their words only).
        index: The assistant's committed-memory index.
        judge: The model asked about close calls (None: the rules alone).
    """

    unit: Unit
    clock: Clock
    settings: Settings
    embedder: Embedder | None
    index: SemanticIndex
    judge: ModelJudge | None = None
    rules: ReconcileRules = field(init=False)

    def __post_init__(self) -> None:
        self.rules = rules_of(self.settings)

    def write(self, drafts: Sequence[MemoryDraft]) -> list[Written]:
        """Store ``drafts`` (embedded now, blocking; the rules alone decide)."""
        texts, keys = self.prepare(drafts)
        vectors = self.embedder.embed(keys) if self.embedder is not None and keys else None
        batch = _Batch(self, drafts, texts, vectors)
        return [batch.apply(i, batch.decide(i)) for i in range(len(drafts))]

    async def awrite(self, drafts: Sequence[MemoryDraft]) -> list[Written]:
        """:meth:`write` for the event loop: embedding awaited, the judge asked if set."""
        texts, keys = self.prepare(drafts)
        embedder = self.embedder
        vectors = await embed_async(embedder, keys) if embedder is not None and keys else None
        batch = _Batch(self, drafts, texts, vectors)
        written = []
        for i in range(len(drafts)):
            decision = batch.decide(i)
            judge = self.judge
            if judge is not None and judge.available and decision.action in ("add", "update"):
                close = self.rules.close_calls(batch.fact(i), batch.near(i))
                decision = await judge.judge(batch.fact(i), close, decision)
            written.append(batch.apply(i, decision))
        return written

    def prepare(self, drafts: Sequence[MemoryDraft]) -> tuple[list[str], list[str]]:
        """The drafts' checked contents and their embedding keys.

        Raises:
            InvalidArgumentsError: empty or oversized content, trust outside 0-1, or
                importance outside 1-10; nothing is stored then.
        """
        texts = [bounded_text(d.content, "content", self.settings.max_memory_chars) for d in drafts]
        for draft in drafts:
            check_draft(draft)
        keys = [memory_key(t, d.source_entity) for t, d in zip(texts, drafts, strict=True)]
        return texts, keys


def refuse_questions(drafts: Sequence[MemoryDraft], settings: Settings) -> None:
    """Raise for a draft that would be refused as a question (the strict ``store`` calls).

    Raises:
        InvalidArgumentsError: quoting the question and saying what to store instead.
    """
    if not settings.memory_reconcile:
        return
    for draft in drafts:
        if not draft.said and is_question(draft.content):
            raise InvalidArgumentsError(
                f"{draft.content[:120]!r} is a question, not a fact; nothing was stored",
                "Store what is known as a statement (e.g. 'Dave drinks red wine'), or "
                "recall_memories to look the answer up.",
            )


class _Batch:
    """One call's drafts being reconciled and stored in order."""

    def __init__(
        self,
        writer: MemoryWriter,
        drafts: Sequence[MemoryDraft],
        texts: Sequence[str],
        vectors: Vectors | None,
    ) -> None:
        self.w = writer
        self.drafts = drafts
        self.texts = texts
        self.vectors = None if vectors is None else np.asarray(vectors, dtype=np.float32)
        self.now = format_time(writer.clock.now())
        self.on = writer.settings.memory_reconcile
        self.name = writer.embedder.name if writer.embedder is not None else None
        self._near: dict[int, list[Near]] = {}
        self._committed: list[list[str]] = self._neighbours() if self.on else []
        # This unit's memories not in the index yet: written before this batch, and the
        # batch's own (by row), compared as arrays, not one Python step per memory.
        earlier = [m for m in writer.unit.pending(Memory).values() if m is not None]
        self._words: dict[str, list[str]] = {}
        for memory in earlier:
            self._words.setdefault(normalized(memory.content), []).append(memory.id)
        usable = [m for m in earlier if self._comparable(m)]
        self._earlier_ids = [m.id for m in usable]
        self._earlier = np.stack([m.vector() for m in usable]) if usable else None  # type: ignore[misc]
        self._made: dict[int, str] = {}

    # -- finding -------------------------------------------------------------------------
    def _neighbours(self) -> list[list[str]]:
        """Each draft's nearest committed memories (one index call for the batch)."""
        rows = len(self.drafts)
        index = self.w.index
        if self.vectors is None or not rows or index.count() == 0:
            if index.count() == 0:
                return [[] for _ in range(rows)]
            # Without vectors only the same words restate a memory: ask BM25.
            worded = zip(self.texts, self.drafts, strict=True)
            asked = [SearchRequest(memory_key(t, d.source_entity)) for t, d in worded]
            return [[h.key for h in index.search(q, limit=NEAREST)] for q in asked]
        found = index.nearest(
            self.vectors,
            k=NEAREST,
            threshold=min(self.w.rules.update_threshold, self.w.rules.paraphrase_threshold),
            exclude=[""] * rows,
        )
        keys = [[n.key for n in row] for row in found]
        for i, (text, draft) in enumerate(zip(self.texts, self.drafts, strict=True)):
            if not draft.said and draft.source_entity:
                # A write-up of one sentence of a long message is far from the message's
                # vector: the words find the quote it came from (reconcile: "quoted in").
                query = memory_key(text, draft.source_entity)
                words = [h.key for h in index.search(SearchRequest(query), limit=QUOTE_CANDIDATES)]
                keys[i] = list(dict.fromkeys([*keys[i], *words]))
        return keys

    def fact(self, i: int) -> Fact:
        """Draft ``i`` as the reconcile rules see it."""
        draft = self.drafts[i]
        trust = draft.source_trust
        return Fact(
            content=self.texts[i],
            source_entity=draft.source_entity,
            occurred_at=draft.occurred_at or self.now,
            source_trust=DEFAULT_TRUST[draft.source_type] if trust is None else trust,
            verbatim=draft.said,
        )

    def near(self, i: int) -> list[Near]:
        """The memories near draft ``i``: committed neighbours and this unit's new ones."""
        if i in self._near:
            return self._near[i]
        keys = dict.fromkeys(self._committed[i] if i < len(self._committed) else [])
        keys.update(dict.fromkeys(self._words.get(normalized(self.texts[i]), [])))
        mine = self.vectors[i] if self.vectors is not None else None
        if mine is not None:
            if self._earlier is not None and self._earlier.shape[1] == mine.shape[0]:
                close = self._closest(self._earlier @ mine)
                keys.update(dict.fromkeys(self._earlier_ids[j] for j in close))
            if self._made and self.vectors is not None:
                rows = np.fromiter(self._made, dtype=np.int64, count=len(self._made))
                close = self._closest(self.vectors[rows] @ mine)
                keys.update(dict.fromkeys(self._made[int(rows[j])] for j in close))
        loaded = self.w.unit.get_many(Memory, list(keys))  # the unit's own versions
        near = [Near(m, _cosine(m, mine, self.name)) for k in keys if (m := loaded.get(k))]
        ranked = sorted(near, key=lambda n: -(n.similarity or 0.0))
        self._near[i] = ranked
        return ranked

    def _closest(self, scores: Vectors) -> list[int]:
        """The positions of the :data:`NEAREST_NEW` best ``scores`` reaching the threshold."""
        passing = np.flatnonzero(scores >= np.float32(self.w.rules.update_threshold))
        if passing.size > NEAREST_NEW:
            best = np.argpartition(-scores[passing], NEAREST_NEW - 1)[:NEAREST_NEW]
            passing = passing[best]
        return [int(j) for j in passing]

    def _comparable(self, memory: Memory) -> bool:
        return memory.embedding is not None and memory.embedder == self.name

    # -- deciding and applying -----------------------------------------------------------
    def decide(self, i: int) -> Decision:
        """The rules' decision for draft ``i`` (add, when reconciling is off)."""
        if not self.on:
            return Decision("add", reason="reconciling is off")
        return self.w.rules.decide(self.fact(i), self.near(i))

    def apply(self, i: int, decision: Decision) -> Written:
        """Carry out ``decision`` for draft ``i`` in the unit of work."""
        if decision.action == "refuse":
            return Written(None, "refused", reason=decision.reason, by=decision.by)
        unit = self.w.unit
        if decision.action == "restate":
            target = unit.get(Memory, decision.targets[0])
            if target is not None:
                restated = self._restate(target, i)
                unit.put(restated)
                return Written(restated, "restated", decision.targets, decision.reason, decision.by)
            decision = Decision("add", reason="the restated memory is gone")
        memory = self._new(i)
        action: Done = "updated" if decision.action == "update" else "added"
        replaced: list[str] = []
        if decision.action == "update":
            for key in decision.targets:
                old = unit.get(Memory, key)
                if old is None or not old.current:
                    continue
                memory, old = _supersede(memory, old)
                unit.put(old)
                replaced.append(key)
            if not replaced:
                action = "added"
        unit.put(memory)
        self._made[i] = memory.id
        self._words.setdefault(normalized(memory.content), []).append(memory.id)
        return Written(memory, action, tuple(replaced), decision.reason, decision.by)

    def _source(self, i: int, *, differs_from: str | None = None) -> MemorySource:
        draft = self.drafts[i]
        text = self.texts[i]
        same = differs_from is None or normalized(text) == normalized(differs_from)
        return MemorySource(
            at=draft.occurred_at or self.now,
            source=draft.source,
            entry_id=draft.entry_id,
            ref=draft.ref,
            verbatim=draft.said,
            text=None if same else text[:300],
        )

    def _restate(self, memory: Memory, i: int) -> Memory:
        """``memory`` with draft ``i`` as one more source (surer: the higher trust, importance).

        Its text, tags and context stay: the sources say where else it came from.
        """
        draft = self.drafts[i]
        fact = self.fact(i)
        sources = (
            *(memory.sources or (_origin(memory),)),
            self._source(i, differs_from=memory.content),
        )
        if len(sources) > MAX_SOURCES:  # the first and the newest are kept
            sources = (sources[0], *sources[-(MAX_SOURCES - 1) :])
        return memory.model_copy(
            update={
                "sources": sources,
                "mentions": memory.mentions + 1,
                "source_trust": max(memory.source_trust, fact.source_trust),
                "importance": max(memory.importance, draft.importance),
            }
        )

    def _new(self, i: int) -> Memory:
        unit = self.w.unit
        state = unit.doc(MemoryState)
        unit.put_doc(state.model_copy(update={"next_id": state.next_id + 1}))
        draft, fact = self.drafts[i], self.fact(i)
        embedder = self.w.embedder
        vector = self.vectors[i] if self.vectors is not None else None
        return Memory(
            id=f"mem_{state.next_id + 1}",
            content=self.texts[i],
            source=draft.source,
            entry_id=draft.entry_id,
            tags=tuple(draft.tags),
            source_type=draft.source_type,
            source_trust=fact.source_trust,
            source_entity=draft.source_entity,
            importance=draft.importance,
            importance_method=draft.importance_method,
            created_at=self.now,
            occurred_at=fact.occurred_at,
            ref=draft.ref,
            context=draft.context,
            embedder=embedder.name if embedder is not None else None,
            embedding=vector.astype(np.float32).tobytes() if vector is not None else None,
            valid_from=fact.occurred_at,
            sources=(self._source(i),),
        )


def _supersede(new: Memory, old: Memory) -> tuple[Memory, Memory]:
    """The newer of two facts about the same thing ends the other's validity.

    Usually ``new`` is newer; a fact told late about an earlier time (an import, a
    night mining old messages) is stored already replaced by the current one.
    """
    new_from = new.valid_from or new.occurred_at
    old_from = old.valid_from or old.occurred_at
    if new_from >= old_from:
        return new, old.model_copy(update={"valid_to": new_from, "superseded_by": new.id})
    return new.model_copy(update={"valid_to": old_from, "superseded_by": old.id}), old


def _origin(memory: Memory) -> MemorySource:
    """The first source of a memory stored before sources were kept."""
    return MemorySource(
        at=memory.occurred_at, source=memory.source, entry_id=memory.entry_id, ref=memory.ref
    )


def _cosine(memory: Memory, vector: Vectors | None, embedder: str | None) -> float | None:
    """The cosine of two vectors by the same embedder (None: not comparable)."""
    own = memory.vector()
    if own is None or vector is None or own.shape != vector.shape or memory.embedder != embedder:
        return None
    return float(own @ vector)
