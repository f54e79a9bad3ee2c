"""The A-MEM second hop (memory/hop.py) on LoCoMo, swept and chosen by cross-validation.

Reads the conversations a ``bench/locomo.py --cache-dir DIR`` run ingested (with the
dreaming night) and asks every question through ``SemanticMemory.recall`` under each
``memory_recall_link_discount`` in ``--discounts`` (and ``--hits``). The discount is
chosen by leave-one-conversation-out: for each conversation, the value that scores best
(hit@5 over categories 1-4 plus recall@10 over 1-5) on the others is applied to it.
Usage::

    python bench/recall_hop.py --data locomo_dev.json --cache-dir DIR [--discounts -1 0.5 1 2]

Prints JSON: per setting the per-category figures, and the cross-validated result.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mindspace.clock import ManualClock
from mindspace.config import Settings
from mindspace.engine.assistant import Assistant
from mindspace.evaluation.locomo import Scoreboard
from mindspace.evaluation.locomo_data import load_samples, score_ranking
from mindspace.llm.offline import OfflineLLM
from mindspace.memory.semantic import SemanticMemory
from mindspace.runtime import build_embedder
from mindspace.storage.sql import SqlStore


def _db(cache: Path, sample_id: str) -> Path:
    done = sorted(cache.glob(f"{sample_id}-*.done"), key=lambda p: p.stat().st_mtime)
    if not done:
        raise SystemExit(f"error: no ingestion of {sample_id!r} in {str(cache)!r}")
    return done[-1].with_suffix(".db")


def _objective(board: Scoreboard) -> float:
    r = board.report()
    return float(r["overall_1_4"]["hit@5"] + r["overall_1_5"]["recall@10"])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--discounts", type=float, nargs="+", default=[-1.0, 0.5, 1.0, 2.0])
    parser.add_argument("--hits", type=int, nargs="+", default=[5])
    args = parser.parse_args()
    base = Settings()
    embedder = build_embedder(base)
    assert embedder is not None
    variants = [(d, k) for d in args.discounts for k in args.hits]
    # per variant, per sample: list of (category, scores)
    scores: dict[tuple[float, int], dict[str, list[tuple[int, dict[str, float]]]]] = {
        v: {} for v in variants
    }
    samples = load_samples(args.data)
    for sample in samples:
        store = SqlStore.from_path(_db(args.cache_dir, sample.sample_id))
        questions = [q for q in sample.questions if q.evidence]
        vectors = embedder.embed([q.text for q in questions])
        for d, k in variants:
            settings = base.model_copy(
                update={"memory_recall_link_discount": d, "memory_recall_link_hits": k}
            )
            assistant = Assistant.open(
                store,
                sample.sample_id,
                llm=OfflineLLM(announce=False),
                clock=ManualClock(),
                settings=settings,
                embedder=embedder,
            )
            core = assistant.core
            memory = SemanticMemory(
                core.read(), core.clock, settings, core.embedder, core.memory_index
            )
            rows = scores[(d, k)].setdefault(sample.sample_id, [])
            for q, vec in zip(questions, vectors, strict=True):
                ranked = [r.memory.ref or "" for r in memory.recall(q.text, limit=10, vector=vec)]
                rows.append((q.category, score_ranking(ranked, q.evidence)))
        store.close()
        print(f"{sample.sample_id} done", file=sys.stderr)

    def board(v: tuple[float, int], ids: list[str]) -> Scoreboard:
        b = Scoreboard()
        for sid in ids:
            for cat, s in scores[v][sid]:
                b.add(cat, s)
        return b

    ids = [s.sample_id for s in samples]
    out: dict[str, Any] = {"variants": {}}
    for v in variants:
        out["variants"][f"discount={v[0]},hits={v[1]}"] = board(v, ids).report()
    cv = Scoreboard()
    chosen: dict[str, str] = {}
    for held in ids:
        rest = [i for i in ids if i != held]
        best = max(variants, key=lambda v: _objective(board(v, rest)))
        chosen[held] = f"discount={best[0]},hits={best[1]}"
        for cat, s in scores[best][held]:
            cv.add(cat, s)
    out["cross_validated"] = cv.report()
    out["chosen_per_fold"] = chosen
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
