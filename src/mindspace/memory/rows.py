"""How every memory search backend reads a stored row and reports neighbours.

The embedded index (:mod:`mindspace.memory.index`), the Mem0 tier
(:mod:`mindspace.storage.mem0_semantic`) and PostgreSQL (:mod:`mindspace.storage.pg_memory`,
:mod:`mindspace.storage.pg_semantic`) each used to rebuild a memory's search text from
its stored columns and to turn (key, similarity) pairs into :class:`Neighbour` lists
their own way; the copies had started to differ (rounding before or after the
threshold, the order of ties). Here is the one way, so the backends answer alike; the
two in-process indexes keep the same :class:`IndexedMemory` of each memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from mindspace.clock import parse_time
from mindspace.memory.records import Memory, memory_key
from mindspace.state.port import StoredRecord
from mindspace.state.semantic import Neighbour

__all__ = ["IndexedMemory", "lexical_text", "neighbours", "stored_lexical_text", "stored_vector"]


def lexical_text(content: str, source_entity: str | None, context: str | None) -> str:
    """What BM25 indexes of a memory: ``Memory.lexical_key()`` from its columns."""
    key = memory_key(content, source_entity)
    return f"{context}\n{key}" if context else key


def stored_lexical_text(row: StoredRecord) -> str:
    """:func:`lexical_text` of a stored row (no record validated)."""
    return lexical_text(str(row["content"]), row["source_entity"], row["context"])


def stored_vector(row: StoredRecord) -> bytes | None:
    """A stored row's float32 vector bytes (drivers may return a memoryview)."""
    embedding = row["embedding"]
    return bytes(embedding) if embedding is not None else None


def neighbours(found: Iterable[tuple[str, float]], *, k: int, threshold: float) -> list[Neighbour]:
    """The ``k`` best of ``found`` with similarity >= ``threshold``, best first.

    Args:
        found: (key, similarity) pairs, in the order that breaks ties (older first).
        k: How many at most.
        threshold: The least similarity, compared before rounding.

    Returns:
        Neighbours whose scores are rounded to 4 decimals (what links record).
    """
    kept = [(key, float(score)) for key, score in found if float(score) >= threshold]
    kept.sort(key=lambda pair: -pair[1])  # stable: ties keep the given order
    return [Neighbour(key, round(score, 4)) for key, score in kept[: max(k, 0)]]


@dataclass(frozen=True)
class IndexedMemory:
    """What an in-process index keeps of one memory, from a record or straight from the store.

    Attributes:
        key: The memory's id.
        content: Its text (what Mem0 stores).
        lexical: What BM25 indexes (:func:`lexical_text`).
        entity: Its source entity, casefolded ("" when none).
        tags: Its tags, casefolded.
        trust: Its source trust.
        occurred: When it happened, as POSIX seconds.
        embedder: The embedder that made its vector.
        embedding: Its float32 vector bytes (None: not embedded).
    """

    FIELDS: ClassVar[tuple[str, ...]] = (
        "id",
        "content",
        "source_entity",
        "context",
        "tags",
        "source_trust",
        "occurred_at",
        "embedder",
        "embedding",
    )
    """The stored columns :meth:`from_stored` reads."""

    key: str
    content: str
    lexical: str
    entity: str
    tags: tuple[str, ...]
    trust: float
    occurred: float
    embedder: str | None
    embedding: bytes | None

    @classmethod
    def of(cls, memory: Memory) -> IndexedMemory:
        """What is kept of a validated record."""
        return cls(
            memory.id,
            memory.content,
            memory.lexical_key(),
            (memory.source_entity or "").casefold(),
            tuple(t.casefold() for t in memory.tags),
            memory.source_trust,
            parse_time(memory.occurred_at).timestamp(),
            memory.embedder,
            memory.embedding,
        )

    @classmethod
    def from_stored(cls, row: StoredRecord) -> IndexedMemory:
        """What is kept of a stored row holding :attr:`FIELDS` (no record validated)."""
        return cls(
            str(row["id"]),
            str(row["content"]),
            stored_lexical_text(row),
            str(row["source_entity"] or "").casefold(),
            tuple(str(t).casefold() for t in row["tags"] or ()),
            float(row["source_trust"]),
            parse_time(str(row["occurred_at"])).timestamp(),
            row["embedder"],
            stored_vector(row),
        )

    def vector_by(self, embedder: str | None) -> npt.NDArray[np.float32] | None:
        """The stored vector if ``embedder`` made it (None: whichever made it), else None."""
        if self.embedding is None or (embedder is not None and self.embedder != embedder):
            return None
        return np.frombuffer(self.embedding, dtype=np.float32)
