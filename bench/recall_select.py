"""Choose the fusion's settings across data sets, never within one (issue #28).

Reads, per data set, a ``bench/recall_ablation.py --grid`` output (every fusion of the
grid on that set's cached conversations) and the ``mindspace bench locomo`` output of the
same set (its BM25 and dense references), and picks the grid point by this rule:

* a variant's **margin** on a set is the least of its hit@5 (1-4) and recall@10 (1-5)
  minus the better of BM25 and dense on that figure (the acceptance: never below a
  component);
* a variant below a set's **floor** (``--floor NAME=HIT,RECALL``: the acceptance's
  "LoCoMo dev stays >= 80 / 83") is not eligible;
* the chosen variant has the largest **worst margin** over the sets it is chosen on;
  ties (within 0.5 points) go to the larger mean of hit@5 and recall@10 over them.

Leave-one-set-out: for each set, the variant chosen on the others, scored on it (what
the rule gives on a set it did not see); then the variant chosen on all sets, the
setting to ship. Prints JSON::

    python bench/recall_select.py NAME=GRID.json,BENCH.json [NAME=...] ... \
        [--floor NAME=HIT,RECALL]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

TIE = 0.5
"""Worst margins this close are a tie (a question is 0.3-0.7 points on these sets)."""


def figures(report: dict[str, Any]) -> tuple[float, float]:
    """hit@5 over categories 1-4 and recall@10 over 1-5 of one report."""
    return float(report["overall_1_4"]["hit@5"]), float(report["overall_1_5"]["recall@10"])


def margins(grid: dict[str, Any], bench: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per variant: its two figures, and its margin over the better component."""
    components = [figures(bench[name]) for name in ("bm25", "dense")]
    best_hit = max(c[0] for c in components)
    best_recall = max(c[1] for c in components)
    out = {}
    for name, report in grid["variants"].items():
        hit, recall = figures(report)
        out[name] = {
            "hit@5": hit,
            "recall@10": recall,
            "margin": round(min(hit - best_hit, recall - best_recall), 1),
        }
    return out


def choose(
    sets: dict[str, dict[str, dict[str, float]]],
    names: list[str],
    floors: dict[str, tuple[float, float]] | None = None,
) -> str:
    """The variant with the best worst margin over ``names`` (ties: best mean).

    A variant under any set's floor (hit@5, recall@10) is left out, when another is not.
    """
    variants = list(next(iter(sets.values())))
    allowed = [
        v
        for v in variants
        if all(
            sets[s][v]["hit@5"] >= hit and sets[s][v]["recall@10"] >= recall
            for s, (hit, recall) in (floors or {}).items()
        )
    ]
    variants = allowed or variants

    def worst(v: str) -> float:
        return min(sets[s][v]["margin"] for s in names)

    def mean(v: str) -> float:
        return sum(sets[s][v]["hit@5"] + sets[s][v]["recall@10"] for s in names) / len(names)

    top = max(worst(v) for v in variants)
    near = [v for v in variants if worst(v) >= top - TIE]
    return max(near, key=mean)


def main(argv: list[str]) -> int:
    """Print the leave-one-set-out choices and the choice on every set."""
    sets: dict[str, dict[str, dict[str, float]]] = {}
    floors: dict[str, tuple[float, float]] = {}
    args = list(argv)
    while "--floor" in args:
        at = args.index("--floor")
        name, _, pair = args[at + 1].partition("=")
        hit, _, recall = pair.partition(",")
        floors[name] = (float(hit), float(recall))
        del args[at : at + 2]
    for arg in args:
        name, _, files = arg.partition("=")
        grid_file, _, bench_file = files.partition(",")
        if not name or not grid_file or not bench_file:
            raise SystemExit(f"{arg!r}: expected NAME=GRID.json,BENCH.json")
        grid = json.loads(Path(grid_file).read_text())
        bench = json.loads(Path(bench_file).read_text())
        sets[name] = margins(grid, bench)
    names = list(sets)
    held_out = {}
    for name in names:
        others = [n for n in names if n != name]
        chosen = choose(sets, others, floors) if others else choose(sets, [name], floors)
        held_out[name] = {"chosen on the others": chosen, **sets[name][chosen]}
    final = choose(sets, names, floors)
    result = {
        "floors": floors,
        "leave one set out": held_out,
        "chosen on every set": final,
        "per set": {n: sets[n][final] for n in names},
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
