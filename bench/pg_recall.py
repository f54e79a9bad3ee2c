"""recall_memories on PostgreSQL (pgvector HNSW + full-text) vs the embedded exact index.

For each size N the same corpus is loaded into a SQLite file (searched by the embedded
exact :class:`MemoryIndex`) and into a PostgreSQL database (searched by
:class:`PgSemanticIndex`), then the same queries run on both, the two backends taking
turns query by query so both see the same machine load:

* ``recall_memories``: the tool end to end as the assistant calls it (query embedding
  through a lookup embedder, search, fusion, metadata, the call's bookkeeping commit);
* ``index_search``: the port's ``search`` alone with the query vector;
* ``recall_at_10``: PostgreSQL's dense top 10 (``search`` with no query terms, so the
  HNSW side alone) against the exact top 10 by inner product over the same vectors.

Vectors: 384-d, clustered (200 random unit centres, each memory a centre plus Gaussian
noise, normalised), so neighbourhoods are dense like real sentence embeddings; texts:
two of 40 topic words (each in ~5% of memories) and six content words drawn by Zipf's
law (:func:`_words`); queries: a topic word and two content words. The
PostgreSQL corpus is inserted in bulk through ``SqlStore.commit`` (5,000 memories a
commit) and its HNSW index built once afterwards, as ``CREATE INDEX`` after a bulk load.
A second assistant with N/10 memories shares the table, so every search filters by
assistant. The server is the test suite's (``mindspace.testing.postgres.LocalPostgres``).

Usage::

    python bench/pg_recall.py [--sizes 1000 10000 100000] [--queries 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mindspace import Assistant, ManualClock
from mindspace.embeddings import HashingEmbedder
from mindspace.memory.records import Memory
from mindspace.offline import OfflineLLM
from mindspace.state.semantic import SearchRequest
from mindspace.storage import SqlStore
from mindspace.storage.pg_memory import ensure_hnsw, hnsw_name
from mindspace.testing.assistants import assistant_on
from mindspace.testing.postgres import LocalPostgres

DIM = 384
_TOPIC_TEXT = """
ale bread sword dragon market river coin inn storm harbor forge guard quest map cellar
lantern rope merchant festival bridge tower forest wolf king queen thief song harp
barrel cheese wine ship rain snow gate wall temple priest scroll potion
"""
TOPICS = _TOPIC_TEXT.split()
WHEN = "2025-12-06T10:00:00Z"


class LookupEmbedder:
    """The benchmark's query vectors by text (hashing for anything else)."""

    name = "bench-384"
    dim = DIM

    def __init__(self) -> None:
        self.known: dict[str, npt.NDArray[np.float32]] = {}
        self._fallback = HashingEmbedder(DIM)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = [self.known.get(t) for t in texts]
        missing = [t for t, r in zip(texts, rows, strict=True) if r is None]
        fallback = iter(self._fallback.embed(missing)) if missing else iter(())
        return np.stack([r if r is not None else next(fallback) for r in rows]).astype(np.float32)


def _unit(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def _corpus(n: int, seed: int) -> tuple[list[str], npt.NDArray[np.float32]]:
    rng = np.random.default_rng(seed)
    centres = _unit(np.random.default_rng(7).normal(size=(200, DIM)).astype(np.float32))
    which = rng.integers(0, len(centres), size=n)
    vectors = _unit(centres[which] + rng.normal(scale=0.06, size=(n, DIM)).astype(np.float32))
    words = _words(rng, (n, 6))
    topics = rng.integers(0, len(TOPICS), size=(n, 2))
    texts = [
        " ".join([TOPICS[a], TOPICS[b], *(f"zorb{w}" for w in row)]) + f" #{k}"
        for k, ((a, b), row) in enumerate(zip(topics, words, strict=True))
    ]
    return texts, vectors


def _words(rng: np.random.Generator, shape: tuple[int, ...]) -> npt.NDArray[np.int64]:
    """Content words by Zipf's law (p ~ 1/rank) over ranks 101-20,100 of a vocabulary.

    Ranks 1-100 are the function words the tokenizer drops as stopwords, so the most
    common content word is in about 1% of memories, as in English text.
    """
    ranks = np.arange(101, 20_101)
    weights = 1.0 / ranks
    picked: npt.NDArray[np.int64] = rng.choice(ranks, size=shape, p=weights / weights.sum())
    return picked


def _records(texts: list[str], vectors: npt.NDArray[np.float32], prefix: str) -> list[Memory]:
    return [
        Memory(
            id=f"{prefix}_{k}",
            content=text,
            created_at=WHEN,
            occurred_at=WHEN,
            embedder=LookupEmbedder.name,
            embedding=vectors[k].tobytes(),
        )
        for k, text in enumerate(texts)
    ]


def _load(assistant: Assistant, records: list[Memory], chunk: int = 5_000) -> float:
    start = time.perf_counter()
    for at in range(0, len(records), chunk):
        with assistant._core.transaction() as unit:
            unit.put_all(records[at : at + chunk])
    return time.perf_counter() - start


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
    }


def _open(store: SqlStore, key: str, embedder: LookupEmbedder) -> Assistant:
    return assistant_on(
        store, key, llm=OfflineLLM(announce=False), clock=ManualClock(), embedder=embedder
    )


async def _measure(
    assistants: dict[str, Assistant], questions: list[str], vectors: npt.NDArray[np.float32]
) -> dict[str, dict[str, Any]]:
    """Latencies on every backend, the backends taking turns query by query (same load)."""
    tool: dict[str, list[float]] = {name: [] for name in assistants}
    search: dict[str, list[float]] = {name: [] for name in assistants}
    for assistant in assistants.values():
        # Warm up: the first call loads the cache (and builds the embedded index).
        await assistant.call_tool("recall_memories", {"query": questions[0], "limit": 10})
    for question, vector in zip(questions, vectors, strict=True):
        for name, assistant in assistants.items():
            t0 = time.perf_counter()
            result = await assistant.call_tool("recall_memories", {"query": question, "limit": 10})
            tool[name].append(time.perf_counter() - t0)
            assert result["success"], result
            t0 = time.perf_counter()
            assistant._core.memory_index.search(SearchRequest(question, vector), limit=60)
            search[name].append(time.perf_counter() - t0)
    return {
        name: {
            "recall_memories": _percentiles(tool[name]),
            "index_search": _percentiles(search[name]),
        }
        for name in assistants
    }


async def _run_size(size: int, queries: int, workdir: Path, pg: LocalPostgres) -> dict[str, Any]:
    embedder = LookupEmbedder()
    texts, vectors = _corpus(size, seed=size)
    other_texts, other_vectors = _corpus(max(size // 10, 10), seed=size + 7)
    rng = np.random.default_rng(size + 1)
    picks = rng.integers(0, size, size=queries)
    query_vectors = _unit(vectors[picks] + rng.normal(scale=0.05, size=(queries, DIM)))
    question_words = _words(rng, (queries, 2))
    questions = [
        f"{TOPICS[int(rng.integers(0, len(TOPICS)))]} zorb{a} zorb{b}" for a, b in question_words
    ]
    embedder.known.update(zip(questions, query_vectors, strict=True))
    records = _records(texts, vectors, "mem")
    others = _records(other_texts, other_vectors, "other")

    sqlite = SqlStore.from_path(workdir / f"recall-{size}.db")
    embedded = _open(sqlite, "keeper", embedder)
    sqlite_load = _load(embedded, records)

    database = f"bench{size}"
    pg_store = SqlStore(pg.new_database(database))
    _load(_open(pg_store, "rival", embedder), others)
    with pg_store.engine.begin() as conn:  # bulk load: build the HNSW index afterwards
        conn.exec_driver_sql(f"DROP INDEX IF EXISTS {hnsw_name(DIM)}")
    on_pg = _open(pg_store, "keeper", embedder)
    pg_load = _load(on_pg, records)
    t0 = time.perf_counter()
    with pg_store.engine.begin() as conn:
        conn.exec_driver_sql("SET LOCAL maintenance_work_mem = '512MB'")
        ensure_hnsw(conn, DIM)
        conn.exec_driver_sql("ANALYZE memories")
    hnsw_build = time.perf_counter() - t0
    figures = await _measure({"sqlite": embedded, "postgresql": on_pg}, questions, query_vectors)
    sqlite_figures, pg_figures = figures["sqlite"], figures["postgresql"]
    sqlite.close()

    # recall@10 of the HNSW side against the exact top 10 over the same vectors.
    index = on_pg._core.memory_index
    found = 0
    for vector in query_vectors:
        exact = np.argpartition(-(vectors @ vector), 10)[:10]
        ours = {h.key for h in index.search(SearchRequest("", vector), limit=10)}
        found += len(ours & {f"mem_{i}" for i in exact})
    pg_store.close()
    pg.drop_database(database)

    ratio = {
        name: round(pg_figures[name]["p50_ms"] / sqlite_figures[name]["p50_ms"], 2)
        for name in ("recall_memories", "index_search")
    }
    return {
        "memories": size,
        "load_seconds": {"sqlite": round(sqlite_load, 1), "postgresql": round(pg_load, 1)},
        "hnsw_build_seconds": round(hnsw_build, 1),
        "sqlite_embedded_exact": sqlite_figures,
        "postgresql_hnsw": pg_figures,
        "p50_ratio_pg_vs_embedded": ratio,
        "pg_dense_recall_at_10_vs_exact": round(found / (10 * queries), 4),
    }


def main() -> None:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        os.chmod(workdir, 0o755)  # the server runs as its own user and needs to enter it
        with LocalPostgres(workdir / "pg") as pg:
            sizes = [asyncio.run(_run_size(size, args.queries, workdir, pg)) for size in args.sizes]
    print(
        json.dumps(
            {
                "benchmark": "pg_recall",
                "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
                "queries_per_size": args.queries,
                "sizes": sizes,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
