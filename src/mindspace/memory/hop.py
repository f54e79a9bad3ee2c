"""A second hop in memory search: the A-MEM links of the best hits.

While the assistant dreams, every memory is linked to its nearest neighbours
(:func:`mindspace.memory.linking.run_dreaming_tick`). A question that needs two facts
("What do Melanie's kids like?") often matches one of them well and the other not at
all; the other may be linked from the first. After the index search and the query-side
rerank (:mod:`mindspace.memory.query`), the memories linked from the ``top`` best hits
enter the candidates ``discount`` standard deviations of the blended score below the hit
that links them, unless they already rank higher on their own. It reads records only,
so it is the same on both backends.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from mindspace.config import Settings
from mindspace.memory.records import Memory, MemoryLinks
from mindspace.state.semantic import Hit

__all__ = ["LinkHop"]

_EDGE = 1e-9


def _logit(score: float) -> float:
    p = min(max(score, _EDGE), 1.0 - _EDGE)
    return math.log(p / (1.0 - p))


def _logistic(value: float) -> float:
    return round(1.0 / (1.0 + math.exp(-value)), 6)


@dataclass(frozen=True)
class LinkHop:
    """How far linked memories rank below the hit that links them.

    Attributes:
        discount: Standard deviations of the blended score below the linking hit;
            negative: links not followed.
        top: How many of the best hits have their links followed.
    """

    discount: float = -1.0
    top: int = 5

    @classmethod
    def of(cls, settings: Settings) -> LinkHop:
        """The hop the ``memory_recall_link_*`` settings ask for."""
        return cls(
            discount=settings.memory_recall_link_discount,
            top=settings.memory_recall_link_hits,
        )

    def apply(
        self,
        hits: Sequence[Hit],
        links: Callable[[Sequence[str]], Mapping[str, MemoryLinks]],
        load: Callable[[Sequence[str]], Mapping[str, Memory]],
        relevance: Callable[[Memory], float | None],
        eligible: Callable[[Memory], bool] = lambda memory: True,
    ) -> list[Hit]:
        """``hits`` with the memories linked from the best of them added, best first.

        Args:
            hits: The reranked hits, best first.
            links: Reads links records by memory id.
            load: Reads memories by id (the linked ones not among the hits).
            relevance: The dense similarity of a linked memory that was not a hit.
            eligible: Whether a linked memory passes the search's filters.
        """
        if self.discount < 0 or self.top < 1 or not hits:
            return list(hits)
        adjusted = {h.key: (_logit(h.score), h) for h in hits}
        best = list(hits[: self.top])
        found = links([h.key for h in best])
        offered: dict[str, float] = {}
        for hit in best:
            record = found.get(hit.key)
            if record is None:
                continue
            inherited = _logit(hit.score) - self.discount
            for link in record.linked_to:
                if offered.get(link.id, -math.inf) < inherited:
                    offered[link.id] = inherited
        if not offered:
            return list(hits)
        new = load(sorted(k for k in offered if k not in adjusted))
        for key, inherited in offered.items():
            known = adjusted.get(key)
            if known is None:
                memory = new.get(key)
                if memory is None or not eligible(memory):
                    continue
                adjusted[key] = (inherited, Hit(key, _logistic(inherited), relevance(memory), 0.0))
            elif known[0] < inherited:
                adjusted[key] = (inherited, known[1])
        order = sorted(adjusted.values(), key=lambda item: -item[0])
        return [replace(hit, score=_logistic(value)) for value, hit in order]
