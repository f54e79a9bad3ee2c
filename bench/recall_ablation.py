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

The "defaults" row reproduces the product row of the ``mindspace bench locomo`` run
that filled the cache (a check that the two agree).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from mindspace.config import Settings
from mindspace.evaluation.locomo import Scoreboard
from mindspace.evaluation.locomo_cache import cached_sample
from mindspace.evaluation.locomo_data import load_samples, score_ranking
from mindspace.memory.semantic import SemanticMemory
from mindspace.offline import OfflineLLM
from mindspace.runtime import build_embedder
from mindspace.storage.sql import SqlStore
from mindspace.testing.assistants import assistant_on

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


def run(data: Path, cache: Path, only: set[str], route: str) -> dict[str, Any]:
    """Every variant's scores over the cached conversations of ``data``."""
    base = Settings()  # as run_locomo does: the environment's MINDSPACE_* settings
    embedder = build_embedder(base)
    if embedder is None:
        raise SystemExit("The ablation needs an embedder; unset MINDSPACE_EMBEDDER=none.")
    boards = {name: Scoreboard() for name in OFF}
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
        for name, overrides in OFF.items():
            settings = Settings(**{**base.model_dump(), **overrides})
            memory = SemanticMemory(
                core.read(), core.clock, settings, core.embedder, core.memory_index
            )
            for question, vector in zip(questions, vectors, strict=True):
                found = memory.recall(question.text, limit=10, vector=vector)
                ranked = [r.memory.ref or "" for r in found]
                boards[name].add(question.category, score_ranking(ranked, question.evidence))
        asked += len(questions)
        store.close()
    reports = {name: board.report() for name, board in boards.items()}
    top = reports["defaults"]
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
    args = parser.parse_args(argv)
    print(json.dumps(run(args.data, args.cache_dir, set(args.only), args.route), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
