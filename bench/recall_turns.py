"""Sweep the query-side rerank of memory search over LoCoMo, chosen by cross-validation.

Reads the conversations a ``bench/locomo.py --cache-dir DIR`` run ingested (the newest
complete one of each), runs the product's index search once per question (the
``limit + 50`` = 60 candidates ``recall_memories`` reranks), then applies
:class:`mindspace.memory.query.QueryRerank` (the product's code, with the store's
records) for every combination of the settings given, and scores the best 10. The
combination is chosen by leave-one-conversation-out cross-validation (objective:
hit@5 over categories 1-4 plus recall@10 over 1-5), and each new rule is also shown
switched off from the defaults. Usage::

    python bench/recall_turns.py --data locomo_dev.json --cache-dir DIR \\
        [--question-penalty 0.75 1] [--reply-discount 0.4 0.6] [--speaker-boost 0 0.6] \\
        [--continuation-discount -1 1.6] [--session-boost 0 0.1]

Prints JSON: the defaults, the ablations, the best combinations on the whole split,
the cross-validated result with the combination each fold chose and the spread of the
held-out conversations' figures.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from dataclasses import astuple, replace
from pathlib import Path
from typing import Any

from mindspace.clock import ManualClock
from mindspace.config import Settings
from mindspace.evaluation.locomo import Scoreboard
from mindspace.evaluation.locomo_data import load_samples, score_ranking
from mindspace.memory.query import QueryRerank
from mindspace.memory.records import Memory
from mindspace.offline import OfflineLLM
from mindspace.runtime import build_embedder
from mindspace.state.semantic import SearchRequest
from mindspace.storage.sql import SqlStore
from mindspace.testing.assistants import assistant_on

Rows = list[tuple[int, dict[str, float]]]
Combo = tuple[float, ...]
FIELDS: tuple[str, ...] = (
    "question_penalty",
    "reply_discount",
    "speaker_boost",
    "continuation_discount",
    "session_boost",
)


def _db(cache: Path, sample_id: str) -> Path:
    done = sorted(cache.glob(f"{sample_id}-*.done"), key=lambda p: -p.stat().st_mtime)
    if not done:
        raise SystemExit(
            f"error: no ingestion of {sample_id!r} in {str(cache)!r}; "
            "run bench/locomo.py --cache-dir with it first."
        )
    return done[0].with_suffix(".db")


def _figures(board: Scoreboard) -> tuple[float, float]:
    r = board.report()
    return float(r["overall_1_4"]["hit@5"]), float(r["overall_1_5"]["recall@10"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, required=True)
    defaults = QueryRerank.of(Settings())
    grid = {
        "question_penalty": [0.75, 1.0],
        "reply_discount": [0.3, 0.4, 0.6],
        "speaker_boost": [0.0, 0.5, 0.6, 0.75],
        "continuation_discount": [-1.0, 1.5, 1.6],
        "session_boost": [0.0, 0.1],
    }
    for name, values in grid.items():
        flag = "--" + name.replace("_", "-")
        parser.add_argument(flag, type=float, nargs="+", default=values)
    args = parser.parse_args()
    base = Settings()
    embedder = build_embedder(base)
    if embedder is None:
        raise SystemExit("error: the benchmark needs an embedder; unset MINDSPACE_EMBEDDER=none.")
    combos: list[Combo] = list(itertools.product(*(getattr(args, f) for f in FIELDS)))
    wanted = {astuple(defaults)[1:]}
    for field in ("speaker_boost", "continuation_discount", "session_boost"):
        off = -1.0 if field == "continuation_discount" else 0.0
        wanted.add(astuple(replace(defaults, **{field: off}))[1:])
    combos += [c for c in sorted(wanted) if c not in combos]
    scores: dict[Combo, dict[str, Rows]] = {c: {} for c in combos}
    samples = load_samples(args.data)
    started = time.perf_counter()
    for sample in samples:
        store = SqlStore.from_path(_db(args.cache_dir, sample.sample_id))
        assistant = assistant_on(
            store,
            sample.sample_id,
            llm=OfflineLLM(announce=False),
            clock=ManualClock(),
            settings=base,
            embedder=embedder,
        )
        core = assistant._core
        unit = core.read()
        questions = [q for q in sample.questions if q.evidence]
        vectors = embedder.embed([q.text for q in questions])
        for q, vec in zip(questions, vectors, strict=True):
            hits = core.memory_index.search(
                SearchRequest(q.text, vec, dense_weight=base.memory_dense_weight), limit=60
            )
            memories: dict[str, Memory] = {}

            def load(
                keys: Any, memories: dict[str, Memory] = memories, unit: Any = unit
            ) -> dict[str, Memory]:
                missing = [k for k in keys if k not in memories]
                if missing:
                    memories.update(unit.get_many(Memory, missing))
                return {k: memories[k] for k in keys if k in memories}

            for combo in combos:
                rerank = QueryRerank(defaults.time_boost, *combo)
                ranked = rerank.apply(q.text, hits, load, lambda m: None)
                refs = [memories[h.key].ref or "" for h in ranked[:10]]
                rows = scores[combo].setdefault(sample.sample_id, [])
                rows.append((q.category, score_ranking(refs, q.evidence)))
        store.close()
        print(
            f"{sample.sample_id}: {len(questions)} questions x {len(combos)} settings, "
            f"{time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )

    def board(combo: Combo, ids: list[str]) -> Scoreboard:
        result = Scoreboard()
        for sid in ids:
            for category, s in scores[combo][sid]:
                result.add(category, s)
        return result

    def objective(combo: Combo, ids: list[str]) -> float:
        return sum(_figures(board(combo, ids)))

    def named(combo: Combo) -> dict[str, float]:
        return dict(zip(FIELDS, combo, strict=True))

    ids = [s.sample_id for s in samples]
    order = sorted(combos, key=lambda c: -objective(c, ids))
    out: dict[str, Any] = {
        "defaults": {
            "settings": named(astuple(defaults)[1:]),
            **board(astuple(defaults)[1:], ids).report(),
        },
        "ablations": {
            f"{f}={named(c)[f]}": board(c, ids).report()
            for c in sorted(wanted)
            for f in FIELDS
            if named(c)[f] != getattr(defaults, f)
        },
        "best": [{"settings": named(c), **board(c, ids).report()} for c in order[:8]],
    }
    cv = Scoreboard()
    folds: dict[str, Any] = {}
    for held in ids:
        rest = [i for i in ids if i != held]
        best = max(combos, key=lambda c: objective(c, rest))
        for category, s in scores[best][held]:
            cv.add(category, s)
        hit, recall = _figures(board(best, [held]))
        folds[held] = {"settings": named(best), "hit@5": hit, "recall@10": recall}
    out["cross_validated"] = cv.report()
    out["folds"] = folds
    out["spread"] = {
        k: statistics.pstdev(f[k] for f in folds.values()) for k in ("hit@5", "recall@10")
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
