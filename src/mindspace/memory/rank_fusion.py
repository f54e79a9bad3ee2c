"""The final ranking of memory search: the rule-adjusted blend fused with its components.

The index blends dense and BM25 scores, and the query rules (:mod:`mindspace.memory.query`)
move memories up and down on cues read from the query (a name, a date, a question mark,
the turns around a hit). Those cues hold on some conversations and mislead on others: a
name that is the asker's own, a long answer after a question. Fused alone, the blend can
fall below either of its components on data it was not tuned on.

So the page is a weighted reciprocal-rank fusion (Cormack et al. 2009) of three rankings
of the same memories: the rule-adjusted blend (weight 1), dense similarity alone and BM25
alone (weights ``memory_recall_dense_rank_weight`` and ``memory_recall_lexical_rank_weight``).
A memory both components put near the top keeps a place near the top whatever the rules
did, and a rule can reorder, not remove, what they agree on. Both weights 0: the blend's
order unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from mindspace.memory.fusion import fuse_candidates
from mindspace.state.semantic import Hit, Rankings

__all__ = ["COMPONENT_DEPTH", "RRF_K", "candidate_rankings", "current_first", "fuse_rankings"]

RRF_K = 10
"""Reciprocal-rank constant: a rank's weight is 1 / (RRF_K + rank). Chosen with the
weights across data sets (bench/RESULTS.md): 60, the usual value, makes the top ranks
so alike that the components outvote every rule of the rules' ranking."""

COMPONENT_DEPTH = 20
"""How many of each component's best memories take part (ranks beyond weigh little)."""


def fuse_rankings(
    blended: Sequence[Hit],
    dense: Sequence[Hit],
    lexical: Sequence[Hit],
    dense_weight: float,
    lexical_weight: float,
) -> list[Hit]:
    """The hits of the three rankings in fused order, best first.

    Args:
        blended: The rule-adjusted ranking, best first (weight 1).
        dense: The best memories by dense similarity alone, best first.
        lexical: The best memories by BM25 alone, best first.
        dense_weight: Weight of ``dense`` against ``blended`` (0: left out).
        lexical_weight: Weight of ``lexical`` against ``blended`` (0: left out).

    Returns:
        Every hit of the three (a hit of ``blended`` keeps its own record), scored by its
        share of the most a memory can get (1.0: first in all three), so scores keep the
        order. Ties keep the blend's order.
    """
    if dense_weight <= 0 and lexical_weight <= 0:
        return list(blended)
    rankings = ((blended, 1.0), (dense, dense_weight), (lexical, lexical_weight))
    fused: dict[str, float] = {}
    hits: dict[str, Hit] = {}
    for ranking, weight in rankings:
        if weight <= 0:
            continue
        for rank, hit in enumerate(ranking[: None if ranking is blended else COMPONENT_DEPTH]):
            fused[hit.key] = fused.get(hit.key, 0.0) + weight / (RRF_K + rank + 1)
            hits.setdefault(hit.key, hit)
    best = sum(w for _, w in rankings if w > 0) / (RRF_K + 1)
    order = sorted(fused, key=lambda key: -fused[key])  # stable: blend's order on ties
    return [replace(hits[key], score=round(fused[key] / best, 6)) for key in order]


def candidate_rankings(
    rows: Sequence[Any],
    limit: int,
    depth: int,
    dense_weight: float,
    *,
    whole: bool,
    dense: bool,
) -> Rankings:
    """The blend of candidate rows and its two components, ranked among the same rows.

    For the indexes that fetch candidates (PostgreSQL, Mem0): each ranking is the one
    :func:`~mindspace.memory.fusion.fuse_candidates` gives at ``dense_weight``, 1 and 0,
    as three searches would, from one fetch.

    Args:
        rows: :func:`~mindspace.memory.fusion.fuse_candidates`' rows.
        limit: How many blended hits at most.
        depth: How many hits of each component at most.
        dense_weight: The dense signal's share of the blend.
        whole: BM25 is standardised over every memory (see ``fuse_candidates``).
        dense: The search had a query vector (without one there is no dense ranking).
    """
    return Rankings(
        fuse_candidates(rows, limit, dense_weight, whole=whole),
        fuse_candidates(rows, depth, 1.0, whole=whole) if dense else [],
        [h for h in fuse_candidates(rows, depth, 0.0, whole=whole) if h.lexical > 0],
    )


def current_first(
    hits: Sequence[Hit], successor: Callable[[str], str | None], within: int | None = None
) -> list[Hit]:
    """``hits`` with each memory a newer fact replaced ranked just below that newer fact.

    The components know nothing of validity: a query in the old fact's words ranks the
    old fact first by dense and BM25 alike, so fusion would undo the rules' "the current
    fact first" (:mod:`mindspace.memory.query`). This puts it back as an order, not a
    score: a replaced memory's successor found further down moves up to just above it
    (following a chain of updates), and takes its score, so scores keep the order.

    Args:
        hits: The fused ranking, best first.
        successor: A hit's ``superseded_by`` (the memory that replaced it), if any.
        within: Only the first ``within`` places are wanted (None: all). Moves are made
            best place first, and a move below them changes nothing above, so those
            places come out the same while ``successor`` is asked only about the hits
            that reach them.
    """
    order = list(hits)
    top = len(order) if within is None else within
    for _ in range(_CHAIN):
        moved = False
        for i, hit in enumerate(order[:top]):
            newer = successor(hit.key)
            if newer is None:
                continue
            j = next((k for k in range(i + 1, len(order)) if order[k].key == newer), None)
            if j is None:
                continue
            order.insert(i, replace(order.pop(j), score=hit.score))
            moved = True
            break
        if not moved:
            break
    return order


_CHAIN = 8
"""How many moves a ranking may need (each fixes one replaced fact above its successor)."""
