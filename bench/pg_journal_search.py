"""PostgreSQL journal search at 1k / 10k / 100k entries: main's exact scan against the indexes.

For each size, entries (60 days, 12-word texts) and their stored vectors (hashing
embedder, 256 dims) are committed through an assistant into a fresh PostgreSQL database
(the test suite's ``LocalPostgres``), then ``PgJournalIndex.search`` runs for ``--queries``
queries, unfiltered and over the last 7 days, each ``--repeats`` times:

- ``before``: the statement main ran before schema version 10 (every vector of the
  assistant scored in one scan; kept here verbatim as :data:`MAIN_SEARCH`);
- ``exact``: this version with every window scored exactly (``EXACT_WINDOW`` raised);
- ``now``: this version as shipped (windows up to ``WALK_WINDOW`` exact through the
  timestamp B-tree, larger ones through HNSW, entries to embed through the vector-state
  index of schema version 12).

The fill commits through the store, as an assistant would, except that the HNSW index
is built once after it (as the migration builds it for a journal stored before schema
10) rather than grown a vector at a time: same index, minutes less at 100k.

Reported: median and p95 milliseconds, and for ``now`` the share of ``before``'s top-10
keys it returned (``recall_at_10``) and whether the totals agree (below ``COUNTED``);
then, at every size, the unfiltered search forced through the HNSW walk at each
``--ef-sweep`` value of ``hnsw.ef_search`` (time and recall against ``before``).

Run:  PYTHONPATH=src python bench/pg_journal_search.py [--sizes 1000 10000 100000]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text

import mindspace.storage.pg_journal as pg_journal
from journal_search import NOW, make_entries, make_queries
from mindspace.embeddings import HashingEmbedder
from mindspace.journal import JournalFilter
from mindspace.journal.records import EntryVector, text_digest
from mindspace.state.semantic import EntryFilter, Neighbour, Ranked
from mindspace.state.unit import StateCache
from mindspace.storage import SqlStore
from mindspace.storage.pg_journal import PgJournalIndex
from mindspace.storage.vectors import vector_literal
from mindspace.testing.postgres import LocalPostgres

DIM = 256
THRESHOLD = 0.2

MAIN_SEARCH = text(
    "WITH v AS MATERIALIZED (SELECT key, digest, -(embedding <#> CAST(:query AS vector)) "
    "AS score FROM journal_vectors WHERE assistant_id = :a AND embedder = :e "
    "AND vector_dims(embedding) = :dim), "
    'c AS MATERIALIZED (SELECT e.key, e.id, e.timestamp COLLATE "C" AS ts, '
    "CASE WHEN v.digest = md5(e.content) THEN v.score END AS score "
    "FROM journal_entries e LEFT JOIN v ON v.key = e.key "
    "WHERE e.assistant_id = :a AND e.key <> ALL(CAST(:exclude AS text[])) "
    'AND (CAST(:since AS text) IS NULL OR e.timestamp COLLATE "C" >= CAST(:since AS text)) '
    "AND (CAST(:project AS text) IS NULL OR EXISTS (SELECT 1 FROM "
    "json_array_elements_text(e.related_projects) p WHERE lower(p) = CAST(:project AS text))) "
    "AND (cardinality(CAST(:tags AS text[])) = 0 OR (SELECT count(DISTINCT lower(t)) FROM "
    "json_array_elements_text(e.tags) t WHERE lower(t) = ANY(CAST(:tags AS text[]))) "
    ">= CASE WHEN :any_tag THEN 1 ELSE cardinality(CAST(:tags AS text[])) END)), "
    "passing AS (SELECT * FROM c WHERE score >= CAST(CAST(:threshold AS real) AS float8)) "
    "SELECT 0 AS part, key, score, row_number() OVER "
    "(ORDER BY score DESC, ts DESC, id DESC) AS n FROM "
    "(SELECT * FROM passing ORDER BY score DESC, ts DESC, id DESC LIMIT :limit) AS best "
    "UNION ALL SELECT 1, NULL, count(*), 0 FROM passing "
    "UNION ALL SELECT 2, key, NULL, row_number() OVER (ORDER BY ts DESC, id DESC) "
    "FROM c WHERE score IS NULL ORDER BY part, n"
)
"""Main's statement at ed92b1c (storage/pg_journal.py ``_SEARCH``), for the before figure."""


def main_search(
    store: SqlStore, index: PgJournalIndex, query: np.ndarray, since: str | None
) -> Ranked:
    params = {
        "query": vector_literal(query),
        "a": index.assistant_id,
        "e": index.embedder,
        "dim": DIM,
        "exclude": [],
        "since": since,
        "project": None,
        "tags": [],
        "any_tag": False,
        "threshold": THRESHOLD,
        "limit": 10,
    }
    hits: list[Neighbour] = []
    total = 0
    with store.engine.begin() as conn:
        conn.exec_driver_sql("SET LOCAL enable_nestloop = off")
        for part, key, score, _ in conn.execute(MAIN_SEARCH, params):
            if part == 0:
                hits.append(Neighbour(str(key), float(score)))
            elif part == 1:
                total = int(score)
    return Ranked(hits, total, [])


def fill(store: SqlStore, count: int) -> PgJournalIndex:
    info = store.open_assistant("bench", create=True)
    cache = StateCache(store, info.id, info.revision)
    entries = make_entries(count, random.Random(count))
    embedder = HashingEmbedder(DIM)
    for start in range(0, count, 2000):
        if start == 2000:  # the first commit made the index: build it once at the end
            with store.engine.begin() as conn:
                conn.exec_driver_sql(f"DROP INDEX {pg_journal.journal_hnsw_name(DIM)}")
        chunk = entries[start : start + 2000]
        vectors = embedder.embed([e.content for e in chunk])
        unit = cache.begin()
        for entry, vector in zip(chunk, vectors, strict=True):
            unit.put(entry)
            unit.put(
                EntryVector(
                    key=str(entry.id),
                    embedder=embedder.name,
                    digest=text_digest(entry.content),
                    embedding=np.asarray(vector, dtype=np.float32).tobytes(),
                )
            )
        cache.commit(unit)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("SET LOCAL maintenance_work_mem = '512MB'")
        pg_journal.ensure_journal_hnsw(conn, DIM)
        conn.exec_driver_sql("ANALYZE")
    index = store.journal_index(cache, embedder.name)
    assert isinstance(index, PgJournalIndex)
    return index


def _ms(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
    }


def _recall(reference: list[Ranked], mine: list[Ranked]) -> float:
    wanted = sum(len(r.hits) for r in reference)
    found = sum(
        len({h.key for h in r.hits} & {h.key for h in m.hits})
        for r, m in zip(reference, mine, strict=True)
    )
    return round(found / wanted, 4) if wanted else 1.0


def sweep(
    index: PgJournalIndex,
    queries: list[np.ndarray],
    repeats: int,
    reference: list[Ranked],
    ef_values: list[int],
) -> list[dict[str, Any]]:
    """The unfiltered search walked through HNSW at each ``hnsw.ef_search``: time, recall."""
    shipped = (pg_journal.WALK_WINDOW, pg_journal.EXACT_WINDOW, pg_journal.EF_SEARCH)
    pg_journal.WALK_WINDOW = pg_journal.EXACT_WINDOW = 100  # every size walks here
    rows = []
    for ef in ef_values:
        pg_journal.EF_SEARCH = ef
        times: list[float] = []
        mine: list[Ranked] = []
        for query in queries:
            for _ in range(repeats):
                t = time.perf_counter()
                got = index.search(query, EntryFilter(), limit=10, threshold=THRESHOLD)
                times.append(time.perf_counter() - t)
            mine.append(got)
        rows.append({"ef_search": ef, **_ms(times), "recall_at_10": _recall(reference, mine)})
    pg_journal.WALK_WINDOW, pg_journal.EXACT_WINDOW, pg_journal.EF_SEARCH = shipped
    return rows


def run_size(
    pg: LocalPostgres,
    count: int,
    queries: list[np.ndarray],
    repeats: int,
    ef_values: list[int],
) -> dict[str, Any]:
    store = SqlStore(pg.new_database(f"journal{count}"))
    started = time.perf_counter()
    index = fill(store, count)
    result: dict[str, Any] = {
        "entries": count,
        "fill_s": round(time.perf_counter() - started, 1),
        "load_before": os.getloadavg(),
    }
    since = JournalFilter(days_back=7).for_index(NOW)
    reference_all: list[Ranked] = []
    for label, where in (("all", EntryFilter()), ("last_7_days", since)):
        timings: dict[str, list[float]] = {"before": [], "exact": [], "now": []}
        reference: list[Ranked] = []
        mine: list[Ranked] = []
        shipped = pg_journal.EXACT_WINDOW
        for query in queries:
            for _ in range(repeats):
                t = time.perf_counter()
                ref = main_search(store, index, query, where.since)
                timings["before"].append(time.perf_counter() - t)
                pg_journal.EXACT_WINDOW = 10**9
                t = time.perf_counter()
                index.search(query, where, limit=10, threshold=THRESHOLD)
                timings["exact"].append(time.perf_counter() - t)
                pg_journal.EXACT_WINDOW = shipped
                t = time.perf_counter()
                got = index.search(query, where, limit=10, threshold=THRESHOLD)
                timings["now"].append(time.perf_counter() - t)
            reference.append(ref)
            mine.append(got)
        if label == "all":
            reference_all = reference
        result[label] = {
            **{name: _ms(times) for name, times in timings.items()},
            "recall_at_10": _recall(reference, mine),
            "totals_agree": sum(r.total == m.total for r, m in zip(reference, mine, strict=True)),
            "median_total": statistics.median(r.total for r in reference),
        }
    result["walk_by_ef_search"] = sweep(index, queries, repeats, reference_all, ef_values)
    result["load_after"] = os.getloadavg()
    store.close()
    pg.drop_database(f"journal{count}")
    return result


def main() -> None:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--walk-window", type=int, default=pg_journal.WALK_WINDOW, help="WALK_WINDOW for `now`"
    )
    parser.add_argument("--ef-search", type=int, default=pg_journal.EF_SEARCH)
    parser.add_argument(
        "--ef-sweep", type=int, nargs="*", default=[100, 400, 1000], help="walks to compare"
    )
    args = parser.parse_args()
    pg_journal.WALK_WINDOW = args.walk_window
    pg_journal.EF_SEARCH = args.ef_search
    embedder = HashingEmbedder(DIM)
    texts = make_queries(args.queries, random.Random(7))
    queries = [np.asarray(v, dtype=np.float32) for v in embedder.embed(texts)]
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # the server runs as its own user and needs to enter it
        with LocalPostgres(Path(tmp) / "pg") as pg:
            results = [run_size(pg, n, queries, args.repeats, args.ef_sweep) for n in args.sizes]
    report = {
        "benchmark": "pg_journal_search",
        "queries": args.queries,
        "repeats": args.repeats,
        "walk_window": args.walk_window,
        "ef_search": args.ef_search,
        "load": os.getloadavg(),
        "results": results,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
