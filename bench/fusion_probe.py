"""What fusing the product's ranking with its BM25 and dense references would score.

A probe for the fusion design (issue #28 item 3), not the product: it reads the
per-question rankings a ``mindspace bench locomo --output OUT.json`` run wrote (the
product's dialog ids beside the BM25 and dense references over the same turns) and
scores weighted reciprocal-rank fusion of them, ``sum(w / (k + rank))``, for a few
weightings, in the benchmark's two figures: hit@5 over categories 1-4 and recall@10
over 1-5. Each list is only ten long, so this is a lower bound on what fusing full
rankings inside the product could do::

    python bench/fusion_probe.py OUT.json [OUT2.json ...]

Prints JSON: per file, per weighting (product, bm25, dense), the two figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

K = 60
"""The usual reciprocal-rank constant (Cormack et al., 2009)."""
WEIGHTS: dict[str, tuple[float, float, float]] = {
    "product": (1.0, 0.0, 0.0),
    "bm25": (0.0, 1.0, 0.0),
    "dense": (0.0, 0.0, 1.0),
    "rrf bm25+dense": (0.0, 1.0, 1.0),
    "rrf all equal": (1.0, 1.0, 1.0),
    "rrf product 2:1:1": (2.0, 1.0, 1.0),
}


def fuse(lists: Sequence[Sequence[str]], weights: Sequence[float]) -> list[str]:
    """Ids by weighted reciprocal-rank score, best first (ties: first seen).

    A memory with no dialog id (``""``: a consolidated or the assistant's own) keeps
    its place as a miss, as it does in the benchmark's score.
    """
    scores: dict[str, float] = {}
    for n, (ranked, weight) in enumerate(zip(lists, weights, strict=True)):
        for rank, item in enumerate(ranked, 1):
            if weight:
                key = item or f"(no id {n}.{rank})"
                scores[key] = scores.get(key, 0.0) + weight / (K + rank)
    return sorted(scores, key=lambda item: -scores[item])


def score(rankings: Sequence[dict[str, Any]], weights: Sequence[float]) -> dict[str, float]:
    """hit@5 (categories 1-4) and recall@10 (1-5) of the fused lists, in percent."""
    hits = recalls = n14 = n15 = 0.0
    for row in rankings:
        fused = fuse([row["product"], row["bm25"], row["dense"]], weights)
        gold = set(row["evidence"])
        n15 += 1
        recalls += len(gold & set(fused[:10])) / len(gold)
        if row["category"] != 5:
            n14 += 1
            hits += bool(gold & set(fused[:5]))
    return {
        "hit@5 (1-4)": round(100 * hits / max(n14, 1), 1),
        "recall@10 (1-5)": round(100 * recalls / max(n15, 1), 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Print the probe as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outputs", type=Path, nargs="+", help="mindspace bench locomo -o files")
    args = parser.parse_args(argv)
    report = {}
    for path in args.outputs:
        rankings = json.loads(path.read_text())["rankings"]
        report[str(path)] = {name: score(rankings, w) for name, w in WEIGHTS.items()}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
