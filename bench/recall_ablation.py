"""Each query-side recall rule's contribution: the product with one rule off at a time.

Reads the conversations a ``mindspace bench locomo --cache-dir DIR`` run ingested (so
run that first, with the same ``--data``, route and settings) and asks every question
again through :meth:`~mindspace.memory.semantic.SemanticMemory.recall` once per variant:
the defaults, each ``memory_recall_*`` rule switched off alone, and all of them off.
The query rules are read only when searching, so every variant shares one ingestion;
each question is embedded once. Prints JSON: per variant the benchmark's report shape
(overall_1_4, overall_1_5, by_category, in percent) and the change against the defaults
in hit@5 (1-4) and recall@10 (1-5)::

    PYTHONPATH=src python bench/recall_ablation.py --data FILE --cache-dir DIR [--only conv-26]
    PYTHONPATH=src python bench/recall_ablation.py --data FILE --cache-dir DIR --grid

The "defaults" row reproduces the product row of the ``mindspace bench locomo`` run
that filled the cache (a check that the two agree). ``--grid`` asks instead with every
fusion of the grid (the weights of dense alone and BM25 alone against the rules' ranking,
and the reciprocal-rank constant, :mod:`mindspace.memory.rank_fusion`), for choosing them
across data sets; ``bench/recall_select.py`` reads several such outputs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mindspace.config import Settings
from mindspace.evaluation.locomo import Scoreboard, askers
from mindspace.evaluation.locomo_cache import cached_sample
from mindspace.evaluation.locomo_data import load_samples, score_ranking
from mindspace.memory import rank_fusion
from mindspace.memory.semantic import SemanticMemory
from mindspace.offline import OfflineLLM
from mindspace.runtime import build_embedder
from mindspace.storage.sql import SqlStore
from mindspace.testing.assistants import assistant_on

DENSE = "memory_recall_dense_rank_weight"
LEXICAL = "memory_recall_lexical_rank_weight"
OFF: dict[str, dict[str, float]] = {
    "defaults": {},
    "no speaker boost": {"memory_recall_speaker_boost": 0.0},
    "no day (session) boost": {"memory_recall_session_boost": 0.0},
    "no time boost": {"memory_recall_time_boost": 0.0},
    "no question penalty": {"memory_recall_question_penalty": 0.0},
    "no continuation": {"memory_recall_continuation_discount": -1.0},
    "no reply following": {"memory_recall_reply_discount": -1.0},
    "no superseded penalty": {"memory_recall_superseded_penalty": 0.0},
}
OFF["all query rules off"] = {k: v for variant in OFF.values() for k, v in variant.items()}
OFF["no fusion (rules' ranking alone)"] = {DENSE: 0.0, LEXICAL: 0.0}
OFF["fusion alone (all rules off)"] = dict(OFF["all query rules off"])
OFF["nothing (blend alone)"] = {**OFF["all query rules off"], DENSE: 0.0, LEXICAL: 0.0}

PAIRS = ((0.0, 0.0), (0.1, 0.1), (0.25, 0.25), (0.5, 0.5))
"""(dense, BM25) weights of the grid, against the rules' ranking at 1."""
CONSTANTS = (10, 60)


def grid() -> dict[str, tuple[dict[str, float], int]]:
    """Every fusion of the grid: name -> (settings, reciprocal-rank constant)."""
    variants = {}
    for (dense, lexical), k in itertools.product(PAIRS, CONSTANTS):
        if dense == lexical == 0.0 and k != CONSTANTS[0]:
            continue  # no fusion: the constant does not matter
        variants[f"dense {dense} bm25 {lexical} k {k}"] = ({DENSE: dense, LEXICAL: lexical}, k)
    return variants


def run(
    data: Path,
    cache: Path,
    only: set[str],
    route: str,
    fusion_grid: bool = False,
    chosen: Sequence[str] = (),
) -> dict[str, Any]:
    """Every variant's scores (``chosen`` ones, "defaults" first) over ``data``'s cache."""
    variants = (
        grid()
        if fusion_grid
        else {
            name: (o, rank_fusion.RRF_K)
            for name, o in OFF.items()
            if not chosen or name == "defaults" or name in chosen
        }
    )
    base = Settings()  # as run_locomo does: the environment's MINDSPACE_* settings
    embedder = build_embedder(base)
    if embedder is None:
        raise SystemExit("The ablation needs an embedder; unset MINDSPACE_EMBEDDER=none.")
    boards = {name: Scoreboard() for name in variants}
    asked_by = askers(data)
    started = time.perf_counter()
    asked = 0
    for sample in load_samples(data):
        if only and sample.sample_id not in only:
            continue
        entry = cached_sample(cache, sample, base, embedder.name, route)
        if not entry.complete:
            raise SystemExit(
                f"{sample.sample_id!r} is not ingested in {str(cache)!r} under these "
                f"settings: run mindspace bench locomo --data {str(data)!r} "
                f"--cache-dir {str(cache)!r} first."
            )
        store = SqlStore.from_path(entry.db)
        # Searching reads no clock; the cached assistant must exist (create=False).
        assistant = assistant_on(
            store,
            sample.sample_id,
            llm=OfflineLLM(),
            create=False,
            settings=base,
            embedder=embedder,
        )
        core = assistant._core
        questions = [q for q in sample.questions if q.evidence]
        plain = SemanticMemory(core.read(), core.clock, base, core.embedder, core.memory_index)
        vectors = [plain.embed_query(q.text) for q in questions]
        default_k = rank_fusion.RRF_K
        for name, (overrides, k) in variants.items():
            rank_fusion.RRF_K = k  # the grid's constant (module-level, read per search)
            settings = Settings(**{**base.model_dump(), **overrides})
            memory = SemanticMemory(
                core.read(), core.clock, settings, core.embedder, core.memory_index
            )
            for question, vector in zip(questions, vectors, strict=True):
                found = memory.recall(
                    question.text,
                    limit=10,
                    vector=vector,
                    asker=asked_by.get(sample.sample_id),
                )
                ranked = [r.memory.ref or "" for r in found]
                boards[name].add(question.category, score_ranking(ranked, question.evidence))
        rank_fusion.RRF_K = default_k
        asked += len(questions)
        store.close()
    reports = {name: board.report() for name, board in boards.items()}
    top = reports[next(iter(variants))]
    for report in reports.values():
        report["change"] = {
            "hit@5 (1-4)": round(report["overall_1_4"]["hit@5"] - top["overall_1_4"]["hit@5"], 1),
            "recall@10 (1-5)": round(
                report["overall_1_5"]["recall@10"] - top["overall_1_5"]["recall@10"], 1
            ),
        }
    return {
        "data": str(data),
        "questions": asked,
        "seconds": round(time.perf_counter() - started, 1),
        "variants": reports,
    }


def main(argv: list[str] | None = None) -> int:
    """Print the ablation as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--only", action="append", default=[], help="a sample id (repeat)")
    parser.add_argument("--route", choices=("message", "journal"), default="message")
    parser.add_argument("--grid", action="store_true", help="the fusion grid, not the rules")
    parser.add_argument(
        "--variant", action="append", default=[], help="only this variant and the defaults"
    )
    args = parser.parse_args(argv)
    result = run(args.data, args.cache_dir, set(args.only), args.route, args.grid, args.variant)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
