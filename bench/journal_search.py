"""Episodic journal search: the NumPy index against the spec's per-entry formula.

For each size, entries are stored in a real SQLite file through an assistant, then the
same queries run through ``mindspace.journal.search_episodic_memory`` (ours: the
vectorised index, including the unit-of-work overlay check) and through the spec's
``score_episodic_memory`` looped over every entry and sorted (the reference, given
pre-parsed timestamps as in the spec). Both must return the same top-10 scores.

Run:  .venv/bin/python bench/journal_search.py [--sizes 1000 10000 100000] [--queries 20]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from mindspace import ManualClock, Settings
from mindspace.clock import format_time
from mindspace.journal import EpisodicWeights, JournalBook, JournalEntry, search_episodic_memory
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

NOW = datetime(2025, 12, 6, 10, 0, tzinfo=UTC)
COMMON = ("the", "a", "of", "to", "and", "in", "at", "on", "with", "for", "was", "is", "by", "from")


def score_episodic_memory(  # the spec's function (004 §5), verbatim
    entry: dict[str, Any],
    query: str,
    now: datetime,
    alpha_recency: float = 1.0,
    alpha_importance: float = 1.0,
    alpha_relevance: float = 1.0,
) -> float:
    # Recency: exponential decay
    age_hours = (now - entry["timestamp"]).total_seconds() / 3600
    recency = math.exp(-0.99 * age_hours)

    # Importance: normalized 1-10 → 0.1-1.0
    importance = entry["importance"] / 10.0

    # Relevance: keyword overlap
    query_words = set(query.lower().split())
    content_words = set(entry["content"].lower().split())
    overlap = len(query_words & content_words)
    relevance = overlap / max(len(query_words), 1)

    # Weighted combination
    total_alpha = alpha_recency + alpha_importance + alpha_relevance
    score = (
        alpha_recency * recency + alpha_importance * importance + alpha_relevance * relevance
    ) / total_alpha

    return score  # noqa: RET504 - kept as the spec writes it


def reference_search(
    entries: list[dict[str, Any]], query: str, now: datetime, limit: int = 10
) -> list[float]:
    """The straightforward way: score every entry in a Python loop, sort, take the best."""
    scored = [(score_episodic_memory(e, query, now), e["id"]) for e in entries]
    scored.sort(reverse=True)
    return [s for s, _ in scored[:limit]]


def make_entries(count: int, rng: random.Random) -> list[JournalEntry]:
    """Synthetic entries: 8-24 words (Zipf-like over 5,000), spread over 60 days."""
    vocabulary = [f"w{i}" for i in range(5_000)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    entries = []
    for i in range(count):
        words = rng.choices(vocabulary, weights, k=rng.randint(6, 20))
        words += rng.choices(COMMON, k=rng.randint(2, 4))
        rng.shuffle(words)
        when = NOW - timedelta(seconds=rng.randint(0, 60 * 24 * 3600))
        entries.append(
            JournalEntry(
                id=i + 1,
                timestamp=format_time(when),
                content=" ".join(words),
                importance=rng.randint(1, 10),
            )
        )
    return entries


def make_queries(count: int, rng: random.Random) -> list[str]:
    vocabulary = [f"w{i}" for i in range(200)]
    return [
        " ".join(rng.sample(vocabulary, rng.randint(2, 5)) + rng.sample(COMMON, 1))
        for _ in range(count)
    ]


def _ms(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(p95 * 1000, 3),
    }


def run_size(count: int, queries: list[str], workdir: Path, repeats: int) -> dict[str, Any]:
    rng = random.Random(count)
    entries = make_entries(count, rng)
    store = SqlStore.from_path(workdir / f"journal_{count}.db")
    clock = ManualClock(NOW)
    settings = Settings(data_dir=workdir)
    assistant = assistant_on(
        store, f"bench_{count}", llm=OfflineLLM(announce=False), clock=clock, settings=settings
    )
    started = time.perf_counter()
    with assistant._core.transaction() as unit:
        JournalBook(unit, clock, settings).set_max_entries(count + 100)
        unit.put_all(entries)
    store_s = time.perf_counter() - started

    # A fresh assistant: its first search loads the rows and builds the index.
    assistant = assistant_on(
        store, f"bench_{count}", llm=OfflineLLM(announce=False), clock=clock, settings=settings
    )
    weights = EpisodicWeights()
    started = time.perf_counter()
    search_episodic_memory(assistant._core.read(), queries[0], NOW, weights)
    first_s = time.perf_counter() - started

    ours: list[float] = []
    ours_top: list[list[float]] = []
    for query in queries:
        for _ in range(repeats):
            unit = assistant._core.read()
            started = time.perf_counter()
            hits = search_episodic_memory(unit, query, NOW, weights, limit=10)
            ours.append(time.perf_counter() - started)
        ours_top.append([h.score for h in hits])

    # One more committed entry: the next search re-indexes only what changed.
    with assistant._core.transaction() as unit:
        JournalBook(unit, clock, settings).add("w1 w2 a fresh entry", importance=5)
    started = time.perf_counter()
    search_episodic_memory(assistant._core.read(), queries[0], NOW, weights)
    after_add_s = time.perf_counter() - started

    plain = [
        {
            "id": e.id,
            "timestamp": datetime.fromisoformat(e.timestamp),
            "content": e.content,
            "importance": e.importance,
        }
        for e in entries
    ]
    reference: list[float] = []
    reference_top: list[list[float]] = []
    for query in queries:
        started = time.perf_counter()
        top = reference_search(plain, query, NOW)
        reference.append(time.perf_counter() - started)
        reference_top.append(top)
    store.close()

    match = all(
        np.allclose(a, b, rtol=0, atol=1e-12) for a, b in zip(ours_top, reference_top, strict=True)
    )
    ours_ms, reference_ms = _ms(ours), _ms(reference)
    return {
        "entries": count,
        "ours": ours_ms,
        "reference": reference_ms,
        "speedup_median": round(reference_ms["median_ms"] / ours_ms["median_ms"], 1),
        "first_search_with_load_and_index_build_ms": round(first_s * 1000, 1),
        "first_search_after_one_new_entry_ms": round(after_add_s * 1000, 3),
        "store_entries_s": round(store_s, 2),
        "top10_scores_match": match,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5, help="runs of each query (ours)")
    args = parser.parse_args(argv)
    queries = make_queries(args.queries, random.Random(7))
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_size(n, queries, Path(tmp), args.repeats) for n in args.sizes]
    report = {
        "benchmark": "journal episodic search, top 10",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "queries": args.queries,
        "results": results,
    }
    print(json.dumps(report, indent=2))
    ok = all(r["top10_scores_match"] for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
