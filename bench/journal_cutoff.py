"""Calibrate semantic search_journal's relevance cut-off (``journal_min_similarity``).

On the LoCoMo dev split (../shared/data/locomo/locomo_dev.json, or --data), every
dialog turn of a conversation stands in for a journal entry and every question of
categories 1-4 for a search: a turn is *relevant* when the question cites it as
evidence. For each candidate cut-off the script reports, with the default MiniLM
embedder (or --embedder hashing):

- ``evidence_kept``: the share of (question, evidence turn) pairs at or above it
  (the cut-off's recall: what a search would still find);
- ``questions_with_evidence``: the share of questions with at least one evidence turn
  at or above it;
- ``unrelated_kept``: the share of (question, other turn) pairs at or above it (what
  passes although the question does not cite it; a turn of the same conversation is
  often on topic, so this over-counts noise);
- ``median_matches``: how many of a conversation's turns a typical question matches.

It also scores the issue's case: a query about a dragon attack against ten notes about
mead (each must fall below the chosen cut-off).

Run:  .venv/bin/python bench/journal_cutoff.py [--embedder minilm] [--data PATH]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from mindspace.config import Settings
from mindspace.embeddings.port import Embedder
from mindspace.evaluation.locomo_data import load_samples
from mindspace.runtime import build_embedder

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev.json"
)
CUTOFFS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
MEAD = [
    "Poured mead for the miller's daughter",
    "The mead barrel in the cellar is half empty",
    "Bob asked for honey mead again",
    "Brewed a new batch of mead with heather",
    "A traveller praised our spiced mead",
    "Mead prices went up at the market",
    "Spilled mead on the bar, cleaned it up",
    "Alice prefers mead to ale",
    "Ordered more bottles for the mead",
    "The mead tasting went well tonight",
]


def calibrate(embedder: Embedder, data: Path) -> dict[str, Any]:
    pairs_evidence: list[float] = []
    pairs_other: list[float] = []
    best_evidence: list[float] = []
    matches: dict[float, list[int]] = {c: [] for c in CUTOFFS}
    for sample in load_samples(data):
        turns = [t for s in sample.sessions for t in s.turns]
        ids = [t.dia_id for t in turns]
        vectors = embedder.embed([t.content for t in turns])
        asked = [q for q in sample.questions if q.category in (1, 2, 3, 4) and q.evidence]
        if not asked:
            continue
        queries = embedder.embed([q.text for q in asked])
        sims = queries @ vectors.T
        for row, question in zip(sims, asked, strict=True):
            cited = np.isin(ids, question.evidence)
            pairs_evidence.extend(row[cited].tolist())
            pairs_other.extend(row[~cited].tolist())
            best_evidence.append(float(row[cited].max()))
            for cut in CUTOFFS:
                matches[cut].append(int((row >= cut).sum()))
    evidence, other, best = np.array(pairs_evidence), np.array(pairs_other), np.array(best_evidence)
    dragon = embedder.embed(["a dragon attacked the village"])[0] @ embedder.embed(MEAD).T
    table = [
        {
            "cutoff": cut,
            "evidence_kept": round(float((evidence >= cut).mean()), 3),
            "questions_with_evidence": round(float((best >= cut).mean()), 3),
            "unrelated_kept": round(float((other >= cut).mean()), 3),
            "median_matches": int(np.median(matches[cut])),
            "dragon_vs_mead_matches": int((dragon >= cut).sum()),
        }
        for cut in CUTOFFS
    ]
    return {
        "questions": len(best),
        "evidence_pairs": len(evidence),
        "evidence_similarity_percentiles": {
            p: round(float(np.percentile(evidence, p)), 3) for p in (5, 10, 25, 50)
        },
        "unrelated_similarity_percentiles": {
            p: round(float(np.percentile(other, p)), 3) for p in (50, 75, 90, 95, 99)
        },
        "cutoffs": table,
        "dragon_vs_mead_max": round(float(dragon.max()), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"No LoCoMo file at {str(args.data)!r}; pass --data PATH.", file=sys.stderr)
        return 2
    embedder = build_embedder(Settings(embedder=args.embedder))
    assert embedder is not None
    started = time.perf_counter()
    report = calibrate(embedder, args.data)
    report.update(
        {
            "benchmark": "journal_min_similarity calibration on LoCoMo dev (categories 1-4)",
            "embedder": embedder.name,
            "default_cutoff": Settings().journal_min_similarity,
            "seconds": round(time.perf_counter() - started, 1),
            "python": platform.python_version(),
        }
    )
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
