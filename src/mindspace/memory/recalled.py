"""A page of memory search results: each memory with the scores that ranked it.

Split from :mod:`mindspace.memory.semantic`: reading the page's records, ranking in the
memories this unit wrote that the index has not seen, and the exact similarity of each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mindspace.embeddings.port import Vectors
from mindspace.memory.index import rrf
from mindspace.memory.lexical import tokenize
from mindspace.memory.records import Memory
from mindspace.state.semantic import Hit
from mindspace.state.unit import Unit

__all__ = ["Recalled", "RecordReader", "exact_relevance", "page"]


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


class RecordReader:
    """The memories one recall reads, each read once (as ``unit`` sees them).

    Memories are a lazy kind: the keys the state cache misses cost a store query (and
    each record's parsing). A recall reads its candidates in several stages (the query
    rules, fusion, the page); through one reader each key is asked of the unit once,
    and the first read takes every candidate of the search at once.

    Args:
        unit: Where the memories are read.
    """

    def __init__(self, unit: Unit) -> None:
        self._unit = unit
        self._read: dict[str, Memory | None] = {}

    def __call__(self, keys: Sequence[str]) -> dict[str, Memory]:
        """The memories under ``keys`` (absent ones left out), the unread ones in one read."""
        wanted = list(dict.fromkeys(keys))
        unread = [key for key in wanted if key not in self._read]
        if unread:
            found = self._unit.get_many(Memory, unread)
            for key in unread:
                self._read[key] = found.get(key)
        return {key: memory for key in wanted if (memory := self._read[key]) is not None}


def page(
    unit: Unit,
    query: str,
    vector: Vectors | None,
    hits: list[Hit],
    limit: int,
    min_trust: float,
    tags: Sequence[str],
    read: RecordReader,
) -> list[Recalled]:
    """The page of ``hits`` (best first, at most ``limit``), as :class:`Recalled`.

    Memories written earlier in ``unit`` are not in the index yet: they are ranked in
    by reciprocal rank against the committed hits (dense and word overlap). ``read``
    reads the memories (the recall's reader: none is read twice).
    """
    pending = unit.pending(Memory)
    committed = [h for h in hits if h.key not in pending]
    fresh = [
        m
        for m in pending.values()
        if m is not None and m.source_trust >= min_trust and all(t in m.tags for t in tags)
    ]
    if not fresh:
        # One read for the page (memories are a lazy kind: each miss is a query).
        found = read([h.key for h in committed[:limit]])
        return [
            Recalled(m, h.score, exact_relevance(m, vector, h.relevance), h.lexical)
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
    loaded = read([k for k, _ in ordered if k not in by_key])
    results = []
    for key, value in ordered:
        if key in by_key:
            memory, cosine, overlap = by_key[key]
            results.append(Recalled(memory, round(value / best, 6), cosine, overlap))
        elif (memory_c := loaded.get(key)) is not None:
            hit = committed_by_key[key]
            relevance = exact_relevance(memory_c, vector, hit.relevance)
            results.append(Recalled(memory_c, round(value / best, 6), relevance, hit.lexical))
    return results


def exact_relevance(memory: Memory, vector: Vectors | None, indexed: float | None) -> float | None:
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
