"""Paraphrase recall: do the facts people told the assistant reach the prompt when asked?

Usage::

    python bench/paraphrase_recall.py [--ablation] [--details]

Prints JSON: for the calibration and the held-out split of the labelled set, the share
of questions whose fact reaches the prompt's ``semantic_memories`` component and the
share of unrelated memories there (definitions in ``mindspace.evaluation.paraphrase``).
``--ablation`` also runs the earlier stage-1 rules (the spec's plain 0.7 cut first) on
both splits, one step at a time. Settings come from the environment (``MINDSPACE_*``)
like any run of the product.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from mindspace.config import Settings
from mindspace.embeddings.minilm import MiniLMEmbedder
from mindspace.evaluation.paraphrase import run_paraphrase_recall

# Each step changes one thing; a speaker weight of 0 is the plain message alone and a
# window of 1 is no window, so the first step is the rule before calibration.
STEPS: list[tuple[str, dict[str, float]]] = [
    (
        "spec: plain message, cosine > 0.7",
        {
            "memory_relevance_threshold": 0.7,
            "memory_relevance_window": 1.0,
            "memory_speaker_query_weight": 0.0,
        },
    ),
    (
        "plain message, cosine > 0.3",
        {
            "memory_relevance_threshold": 0.3,
            "memory_relevance_window": 1.0,
            "memory_speaker_query_weight": 0.0,
        },
    ),
    (
        "speaker-aware message, cosine > 0.3",
        {
            "memory_relevance_threshold": 0.3,
            "memory_relevance_window": 1.0,
            "memory_speaker_query_weight": 1.0,
        },
    ),
    (
        "+ within 0.05 of the best",
        {
            "memory_relevance_threshold": 0.3,
            "memory_relevance_window": 0.05,
            "memory_speaker_query_weight": 1.0,
        },
    ),
    (
        "+ blended with the plain message (0.75 : 0.25)",
        {
            "memory_relevance_threshold": 0.3,
            "memory_relevance_window": 0.05,
            "memory_speaker_query_weight": 0.75,
        },
    ),
]


async def _run(ablation: bool, details: bool) -> dict[str, Any]:
    embedder = MiniLMEmbedder()
    report = await run_paraphrase_recall(embedder=embedder, settings=Settings(), details=details)
    if ablation:
        steps = []
        for label, values in STEPS:
            step = await run_paraphrase_recall(
                embedder=embedder, settings=Settings().model_copy(update=values)
            )
            steps.append(
                {
                    "step": label,
                    **{
                        f"{split}_{metric}": step[split][metric]
                        for split in ("calibration", "heldout")
                        for metric in ("reach_rate", "unrelated_share", "memories_per_question")
                    },
                    "offtopic_memories_per_message": step["offtopic"]["memories_per_message"],
                }
            )
        report["ablation"] = steps
    return report


def main(argv: list[str]) -> int:
    """Run the benchmark and print its JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ablation", action="store_true", help="also run the earlier rules")
    parser.add_argument("--details", action="store_true", help="include every component")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(_run(args.ablation, args.details)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
