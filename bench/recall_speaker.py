"""A boost for memories told by the one speaker a LoCoMo question names (not in the product).

Reads the conversations a ``bench/locomo.py --cache-dir DIR`` run ingested (the newest
complete one of each), asks every question through ``SemanticMemory.recall`` for 60
results, and re-orders them with ``boost`` added (in standard deviations of the blended
score, on the logit of each score) to memories whose ``source_entity`` is the only
speaker among the results named in the question. The boost is chosen by
leave-one-conversation-out (objective: hit@5 over categories 1-4 plus recall@10 over
1-5). Usage::

    python bench/recall_speaker.py --data locomo_dev.json --cache-dir DIR [--boosts 0 0.5 1]

Prints JSON: per boost the per-category figures, and the cross-validated result.
"""

from __future__ import annotations

import argparse
import json
import math
import re
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

Rows = list[tuple[int, dict[str, float]]]


def _db(cache: Path, sample_id: str) -> Path:
    done = sorted(cache.glob(f"{sample_id}-*.done"), key=lambda p: -p.stat().st_mtime)
    if not done:
        raise SystemExit(f"error: no ingestion of {sample_id!r} in {str(cache)!r}")
    return done[0].with_suffix(".db")


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


def _objective(board: Scoreboard) -> float:
    r = board.report()
    return float(r["overall_1_4"]["hit@5"] + r["overall_1_5"]["recall@10"])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--boosts", type=float, nargs="+", default=[0.0, 0.25, 0.5, 1.0, 2.0])
    args = parser.parse_args()
    base = Settings()
    embedder = build_embedder(base)
    if embedder is None:
        raise SystemExit("error: the benchmark needs an embedder; unset MINDSPACE_EMBEDDER=none.")
    scores: dict[float, dict[str, Rows]] = {b: {} for b in args.boosts}
    samples = load_samples(args.data)
    for sample in samples:
        store = SqlStore.from_path(_db(args.cache_dir, sample.sample_id))
        assistant = Assistant.open(
            store,
            sample.sample_id,
            llm=OfflineLLM(announce=False),
            clock=ManualClock(),
            settings=base,
            embedder=embedder,
        )
        core = assistant.core
        memory = SemanticMemory(core.read(), core.clock, base, core.embedder, core.memory_index)
        questions = [q for q in sample.questions if q.evidence]
        vectors = embedder.embed([q.text for q in questions])
        for q, vec in zip(questions, vectors, strict=True):
            found = memory.recall(q.text, limit=60, vector=vec)
            words = {w.casefold() for w in re.findall(r"[A-Za-z]+", q.text)}
            named = {
                r.memory.source_entity
                for r in found
                if r.memory.source_entity and r.memory.source_entity.casefold() in words
            }
            for b in args.boosts:
                order = found
                if len(named) == 1:
                    order = sorted(
                        found,
                        key=lambda r: (
                            -(_logit(r.score) + (b if r.memory.source_entity in named else 0))
                        ),
                    )
                ranked = [r.memory.ref or "" for r in order[:10]]
                rows = scores[b].setdefault(sample.sample_id, [])
                rows.append((q.category, score_ranking(ranked, q.evidence)))
        store.close()
        print(f"{sample.sample_id} done", file=sys.stderr)

    def board(b: float, ids: list[str]) -> Scoreboard:
        result = Scoreboard()
        for sid in ids:
            for category, s in scores[b][sid]:
                result.add(category, s)
        return result

    ids = [s.sample_id for s in samples]
    out: dict[str, Any] = {"boosts": {str(b): board(b, ids).report() for b in args.boosts}}
    cv = Scoreboard()
    chosen: dict[str, float] = {}
    for held in ids:
        rest = [i for i in ids if i != held]
        best = max(args.boosts, key=lambda b: _objective(board(b, rest)))
        chosen[held] = best
        for category, s in scores[best][held]:
            cv.add(category, s)
    out["cross_validated"] = cv.report()
    out["chosen_per_fold"] = chosen
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
