"""Where reflection finds evidence for its questions (spec 004 §3, step 2).

:class:`EvidenceSource` is the seam: today :class:`JournalEvidence` searches the journal
with episodic scoring; semantic memory can plug in another source later.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from mindspace.clock import Clock
from mindspace.journal.episodic import EpisodicWeights, search_episodic_memory
from mindspace.state.unit import Unit
from mindspace.text import keywords

__all__ = ["Evidence", "EvidenceSource", "JournalEvidence", "question_keywords"]


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence, normalised to the spec's ``{id, content, score}``."""

    id: str
    content: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        """The spec's shape."""
        return {"id": self.id, "content": self.content, "score": round(self.score, 6)}


class EvidenceSource(Protocol):
    """Finds evidence for a reflection question."""

    async def find(self, question: str, limit: int) -> Sequence[Evidence]:
        """Up to ``limit`` pieces of evidence for ``question``, best first."""
        ...


def question_keywords(question: str) -> str:
    """A question reduced to its content words (:func:`mindspace.text.keywords`).

    The result is the episodic search query: stopwords would only dilute its relevance.
    """
    return " ".join(keywords(question))


class JournalEvidence:
    """Evidence from the journal, ranked by episodic scoring.

    Args:
        unit: The unit of work whose journal is searched.
        clock: The time recency is measured from.
        weights: The episodic weights.
    """

    def __init__(self, unit: Unit, clock: Clock, weights: EpisodicWeights) -> None:
        self.unit = unit
        self.clock = clock
        self.weights = weights

    async def find(self, question: str, limit: int) -> list[Evidence]:
        """The best-scoring journal entries for the question's content words."""
        hits = search_episodic_memory(
            self.unit, question_keywords(question), self.clock.now(), self.weights, limit
        )
        return [Evidence(h.entry.evidence_key, h.entry.content, h.score) for h in hits]
