"""Semantic journal search: ``search_journal`` with an embedder, at 1k to 60k entries.

For each size, entries are stored in a real SQLite file through an assistant, then
queries run through ``mindspace.journal.search_journal`` over the hashing embedder (cheap
to embed, so the timing is the search's, not a model's), twice: with every entry embedded
at query time (no stored vectors: the process-wide cache of ``EmbeddingRanker``; the
first query embeds every entry and is reported apart), then through the journal index
port over the vectors the sleep cycle stores (``embed_pending_entries``). The reference
is a per-entry Python loop over the same cached vectors (one dot product per entry, then
a sort); both must return the same top-10 scores. The stored-vector path is timed
again with a filter (the last 7 days of the 60), against the loop over those entries.
A size past the ranker's 50,000-row cache limit shows whether semantic search still
answers there.

With ``--postgres`` the entries live in PostgreSQL (the test suite's ``LocalPostgres``)
and the stored-vector path is the pgvector scan of ``PgJournalIndex``.

Run:  .venv/bin/python bench/journal_semantic.py [--sizes 1000 10000 60000] [--queries 20]
      [--postgres]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from journal_search import NOW, _ms, make_entries, make_queries
from mindspace import ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.journal import (
    JournalBook,
    JournalEntry,
    JournalFilter,
    SemanticJournal,
    search_journal,
)
from mindspace.journal.vectors import embed_pending_entries
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on
from mindspace.testing.postgres import LocalPostgres

DIM = 256


def reference_top(
    vectors: dict[str, np.ndarray], entries: list[JournalEntry], query: np.ndarray, limit: int
) -> list[float]:
    """The straightforward way: one dot product per entry in a Python loop, then sort."""
    scored = [(-float(vectors[e.content] @ query), i) for i, e in enumerate(entries)]
    scored.sort()
    return [-s for s, _ in scored[:limit]]


async def run_size(
    count: int, queries: list[str], workdir: Path, repeats: int, pg: LocalPostgres | None
) -> dict[str, Any]:
    entries = make_entries(count, random.Random(count))
    if pg is None:
        store = SqlStore.from_path(workdir / f"semantic_{count}.db")
    else:
        store = SqlStore(pg.new_database(f"semantic{count}"))
    clock = ManualClock(NOW)
    settings = Settings(data_dir=workdir)
    embedder = HashingEmbedder(DIM)
    assistant = assistant_on(
        store,
        f"bench_{count}",
        llm=OfflineLLM(announce=False),
        clock=clock,
        settings=settings,
        embedder=embedder,
    )
    with assistant._core.transaction() as unit:
        JournalBook(unit, clock, settings).set_max_entries(count + 100)
        unit.put_all(entries)
    index = assistant._core.journal_index
    assert index is not None
    # No cut-off, so the top 10 compare with the reference's whatever the scores.
    stored = SemanticJournal(embedder, index, min_similarity=-1.0)
    query_time = SemanticJournal(embedder, None, min_similarity=-1.0)
    where = JournalFilter()
    result: dict[str, Any] = {"entries": count}

    async def timed(
        meaning: SemanticJournal, where: JournalFilter = where
    ) -> tuple[list[float], list[list[float]]]:
        times: list[float] = []
        tops: list[list[float]] = []
        for query in queries:
            for _ in range(repeats):
                unit = assistant._core.read()
                started = time.perf_counter()
                found = await search_journal(unit, NOW, query, where, meaning=meaning)
                times.append(time.perf_counter() - started)
            tops.append(found.scores or [])
        return times, tops

    started = time.perf_counter()
    await search_journal(assistant._core.read(), NOW, queries[0], where, meaning=query_time)
    result["first_search_embeds_all_ms"] = round((time.perf_counter() - started) * 1000, 1)
    fallback, fallback_top = await timed(query_time)
    # What the night does: store every entry's vector (batches of 1,000 here).
    started = time.perf_counter()
    while True:
        with assistant._core.transaction() as unit:
            done = await embed_pending_entries(unit, index, embedder, batch=1_000)
        if not done["embedded"]:
            break
    result["store_vectors_s"] = round(time.perf_counter() - started, 2)
    ours, ours_top = await timed(stored)
    # A filtered search: the last 7 days of the 60 (about an eighth of the entries).
    recent = JournalFilter(days_back=7)
    filtered, filtered_top = await timed(stored, recent)

    # The reference gets the vectors for free (already embedded) and the same candidate
    # order (search_journal's newest first); only the scoring loop and sort are timed.
    candidates = sorted(entries, key=lambda e: (e.timestamp, e.id), reverse=True)
    contents = [e.content for e in candidates]
    vectors = dict(zip(contents, embedder.embed(contents), strict=True))
    reference: list[float] = []
    reference_top10: list[list[float]] = []
    for query in queries:
        q = embedder.embed([query])[0]
        started = time.perf_counter()
        top = reference_top(vectors, candidates, q, 10)
        reference.append(time.perf_counter() - started)
        reference_top10.append(top)
    since = recent.since(NOW)
    last_week = [e for e in candidates if since is None or e.timestamp >= since]
    recent_top10 = [reference_top(vectors, last_week, embedder.embed([q])[0], 10) for q in queries]
    store.close()

    ours_ms, reference_ms = _ms(ours), _ms(reference)

    def same(tops: list[list[float]], reference: list[list[float]] = reference_top10) -> bool:
        # Scores, not ids: a product and a per-row dot may differ in the last bit,
        # which reorders near-ties.
        return all(
            np.allclose(a, b, rtol=0, atol=1e-5) for a, b in zip(tops, reference, strict=True)
        )

    result.update(
        {
            "search_journal_stored_vectors": ours_ms,
            "search_journal_stored_vectors_last_7_days": _ms(filtered),
            "search_journal_embedded_at_query_time": _ms(fallback),
            "per_entry_loop_scoring_only": reference_ms,
            "speedup_median": round(reference_ms["median_ms"] / ours_ms["median_ms"], 1),
            "top10_scores_match": same(ours_top)
            and same(fallback_top)
            and same(filtered_top, recent_top10),
        }
    )
    return result


async def amain(args: argparse.Namespace) -> dict[str, Any]:
    queries = make_queries(args.queries, random.Random(7))
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if args.postgres:
            os.chmod(workdir, 0o755)  # the server runs as its own user and needs to enter it
            with LocalPostgres(workdir / "pg") as pg:
                results = [
                    await run_size(n, queries, workdir, args.repeats, pg) for n in args.sizes
                ]
        else:
            results = [await run_size(n, queries, workdir, args.repeats, None) for n in args.sizes]
    return {
        "benchmark": "journal semantic search (hashing embedder), top 10",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "backend": "postgresql" if args.postgres else "sqlite",
        "queries": args.queries,
        "repeats": args.repeats,
        "results": results,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 60_000])
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5, help="runs of each query (ours)")
    parser.add_argument("--postgres", action="store_true", help="store in PostgreSQL")
    args = parser.parse_args(argv)
    report = asyncio.run(amain(args))
    print(json.dumps(report, indent=2))
    ok = all(r.get("top10_scores_match", False) for r in report["results"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
