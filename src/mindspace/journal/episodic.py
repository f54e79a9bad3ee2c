"""Episodic retrieval (spec 004 §5): recency, importance and relevance, weighted.

``score = (a_rec * recency + a_imp * importance + a_rel * relevance) / (a_rec + a_imp + a_rel)``
with ``recency = exp(-decay * age_hours)``, ``importance = importance / 10`` and
``relevance = |query words & content words| / |query words|`` (words: lowercased,
split on whitespace). :func:`score_episodic_memory` is the formula for one entry;
:func:`search_episodic_memory` computes it for every entry at once on the
:mod:`~mindspace.journal.index` arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mindspace.clock import parse_time
from mindspace.config import Settings
from mindspace.errors import ConfigError
from mindspace.journal.index import indexes_for, query_words
from mindspace.journal.records import JournalEntry
from mindspace.state.unit import Unit

__all__ = ["EpisodicHit", "EpisodicWeights", "score_episodic_memory", "search_episodic_memory"]


@dataclass(frozen=True)
class EpisodicWeights:
    """The alphas of the three parts and the recency decay rate (per hour of age)."""

    recency: float = 1.0
    importance: float = 1.0
    relevance: float = 1.0
    decay_rate: float = 0.99

    def __post_init__(self) -> None:
        alphas = (self.recency, self.importance, self.relevance)
        if min(alphas) < 0 or sum(alphas) <= 0 or self.decay_rate < 0:
            raise ConfigError(
                f"Episodic weights must be >= 0 with a positive sum and the decay rate >= 0; "
                f"got alphas {alphas!r} and decay {self.decay_rate!r}. Fix the "
                "MINDSPACE_EPISODIC_ALPHA_* / MINDSPACE_EPISODIC_DECAY_RATE settings."
            )

    @classmethod
    def from_settings(cls, settings: Settings) -> EpisodicWeights:
        """The weights configured in ``settings``."""
        return cls(
            settings.episodic_alpha_recency,
            settings.episodic_alpha_importance,
            settings.episodic_alpha_relevance,
            settings.episodic_decay_rate,
        )

    @property
    def alphas(self) -> tuple[float, float, float]:
        """(recency, importance, relevance)."""
        return (self.recency, self.importance, self.relevance)


@dataclass(frozen=True)
class EpisodicHit:
    """One ranked entry with the parts of its score."""

    entry: JournalEntry
    score: float
    recency: float
    importance: float
    relevance: float

    def to_dict(self, digits: int = 6) -> dict[str, Any]:
        """The hit as JSON-ready data, scores rounded to ``digits`` places."""
        return {
            "entry": self.entry.to_spec(),
            "score": round(self.score, digits),
            "recency": round(self.recency, digits),
            "importance": round(self.importance, digits),
            "relevance": round(self.relevance, digits),
        }


def score_episodic_memory(
    entry: JournalEntry, query: str, now: datetime, weights: EpisodicWeights | None = None
) -> float:
    """The spec's score of one entry (a future timestamp counts as age 0)."""
    w = weights or EpisodicWeights()
    age_hours = max((now - parse_time(entry.timestamp)).total_seconds(), 0.0) / 3600
    recency = math.exp(-w.decay_rate * age_hours)
    importance = entry.importance / 10.0
    words = query_words(query)
    overlap = len(words & query_words(entry.content))
    relevance = overlap / max(len(words), 1)
    total_alpha = w.recency + w.importance + w.relevance
    return (w.recency * recency + w.importance * importance + w.relevance * relevance) / total_alpha


def search_episodic_memory(
    unit: Unit,
    query: str,
    now: datetime,
    weights: EpisodicWeights | None = None,
    limit: int = 10,
) -> list[EpisodicHit]:
    """The ``limit`` best entries for ``query``, best first (ties: newer first).

    Scores every entry the unit sees, committed or not, with NumPy.
    """
    w = weights or EpisodicWeights()
    words = query_words(query)
    when = now.timestamp()
    committed, overlay, shadowed = indexes_for(unit)
    hits: list[EpisodicHit] = []
    for index, skip in ((committed, shadowed), (overlay, set[str]())):
        rows = index.top(words, when, w.alphas, w.decay_rate, limit, exclude=skip)
        hits.extend(
            EpisodicHit(entry, float(s), float(r), float(i), float(v))
            for entry, s, r, i, v in zip(
                rows.entries,
                rows.score,
                rows.recency,
                rows.importance,
                rows.relevance,
                strict=True,
            )
        )
    hits.sort(key=lambda h: (-h.score, -parse_time(h.entry.timestamp).timestamp(), -h.entry.id))
    return hits[: max(limit, 0)]
