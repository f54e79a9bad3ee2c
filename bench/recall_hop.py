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
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

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
    """The newest ingestion of ``sample_id`` that dreamt (holds A-MEM links)."""
    done = sorted(cache.glob(f"{sample_id}-*.done"), key=lambda p: -p.stat().st_mtime)
    for entry in done:
        db = entry.with_suffix(".db")
        with closing(sqlite3.connect(db)) as conn:
            if conn.execute("select count(*) from memory_links").fetchone()[0]:
                return db
    raise SystemExit(f"error: no dreamt ingestion of {sample_id!r} in {str(cache)!r}")


def _spread(found: list[Any], keep: int) -> list[str]:
    """The first ``keep`` as ranked; the rest of ten from days not yet shown, first."""
    chosen = list(found[:keep])
    days = {r.memory.occurred_at[:10] for r in chosen}
    rest = found[keep:]
    other = [r for r in rest if r.memory.occurred_at[:10] not in days]
    firsts: list[Any] = []
    seen: set[str] = set()
    for r in other:
        if r.memory.occurred_at[:10] not in seen:
            seen.add(r.memory.occurred_at[:10])
            firsts.append(r)
    tail = [r for r in rest if r not in firsts]
    return [r.memory.ref or "" for r in (chosen + firsts + tail)[:10]]


def _label(v: tuple[float, int]) -> str:
    d, k = v
    if d <= -100.0:
        return f"feedback weight={(-100.0 - d) / 100:g}"
    if d <= -2.0:
        return f"spread keep={int(-2.0 - d)}"
    return f"hop discount={d:g},hits={k}"


def _objective(board: Scoreboard) -> float:
    r = board.report()
    return float(r["overall_1_4"]["hit@5"] + r["overall_1_5"]["recall@10"])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--discounts", type=float, nargs="+", default=[-1.0, 0.5, 1.0, 2.0])
    parser.add_argument("--hits", type=int, nargs="+", default=[5])
    parser.add_argument(
        "--spread",
        type=int,
        nargs="*",
        default=[],
        help="also try: keep this many top hits, fill the rest of the 10 from other days first",
    )
    parser.add_argument(
        "--prf",
        type=float,
        nargs="*",
        default=[],
        help="also try: dense query + this weight times the mean of the top 3 hits' vectors",
    )
    args = parser.parse_args()
    base = Settings()
    embedder = build_embedder(base)
    assert embedder is not None
    variants = [(d, k) for d in args.discounts for k in args.hits]
    # Spread variants: discount -2 - keep (hop off), re-ordered by day after the search.
    variants += [(-2.0 - keep, 0) for keep in args.spread]
    # Feedback variants: discount -100 - 100 * weight (hop off), a second search.
    variants += [(-100.0 - 100 * w, 3) for w in args.prf]
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
                update={"memory_recall_link_discount": max(d, -1.0), "memory_recall_link_hits": k}
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
                if d <= -100.0:
                    first = memory.recall(q.text, limit=10, vector=vec)
                    tops = [v for r in first[:k] if (v := r.memory.vector()) is not None]
                    fed = vec + (-100.0 - d) / 100 * np.mean(tops, axis=0) if tops else vec
                    fed = fed / np.linalg.norm(fed)
                    found = memory.recall(q.text, limit=10, vector=fed)
                    ranked = [r.memory.ref or "" for r in found]
                elif d <= -2.0:
                    found = memory.recall(q.text, limit=40, vector=vec)
                    ranked = _spread(found, int(-2.0 - d))
                else:
                    found = memory.recall(q.text, limit=10, vector=vec)
                    ranked = [r.memory.ref or "" for r in found]
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
        out["variants"][_label(v)] = board(v, ids).report()
    cv = Scoreboard()
    chosen: dict[str, str] = {}
    for held in ids:
        rest = [i for i in ids if i != held]
        best = max(variants, key=lambda v: _objective(board(v, rest)))
        chosen[held] = _label(best)
        for cat, s in scores[best][held]:
            cv.add(cat, s)
    out["cross_validated"] = cv.report()
    out["chosen_per_fold"] = chosen
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
