"""The search indexes an assistant's memory and journal tools rank with.

The facade does not choose them: the composition root (:class:`mindspace.runtime.Runtime`)
passes an :class:`IndexFactory` that fits its store (PostgreSQL's own vector search, or
the embedded indexes below). The embedded ones are the default for an assistant built
without the root (tests on a bare store).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from mindspace.journal.vectors import EntryVectorIndex
from mindspace.memory.index import MemoryIndex
from mindspace.state.semantic import JournalIndex, SemanticIndex
from mindspace.state.unit import StateCache

__all__ = ["IndexFactory", "SearchIndexes", "embedded_indexes"]


@dataclass(frozen=True)
class SearchIndexes:
    """One assistant's memory index and journal vector ranking."""

    memory: SemanticIndex
    journal: JournalIndex | None
    """None when there is no embedder (journal search is then lexical only)."""


class IndexFactory(Protocol):
    """Builds an assistant's :class:`SearchIndexes` on its state cache."""

    def __call__(self, state: StateCache, embedder: str | None) -> SearchIndexes:
        """The indexes over ``state``'s assistant for the embedder named ``embedder``."""
        ...


def embedded_indexes(state: StateCache, embedder: str | None) -> SearchIndexes:
    """The in-process indexes, kept in step with the state cache's commits."""
    journal = EntryVectorIndex(state, embedder) if embedder is not None else None
    return SearchIndexes(MemoryIndex(state, embedder), journal)
