"""Benchmark semantic memory: recall latency, ingestion throughput, exactness. Prints JSON.

For each corpus size the same vectors are searched three ways in one run:

* ``recall_memories``: the tool, end to end (argument checks, query embedding, dense +
  BM25 search, fusion, metadata), as the assistant calls it;
* ``index_search``: the hybrid index alone with a precomputed query vector;
* ``numpy_topk``: a bare ``matrix @ q`` + ``argpartition`` over the same float32 matrix.

The corpus is embedded with the hashing embedder (384 dims) so 100k memories build in
seconds; ingestion throughput is measured separately with the default MiniLM embedder
when it is installed. Usage::

    python bench/memory_search.py [--sizes 10000 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from mindspace import Assistant, ManualClock
from mindspace.embeddings import HashingEmbedder
from mindspace.embeddings.port import Embedder
from mindspace.memory.records import Memory
from mindspace.memory.semantic import MemoryDraft, SemanticMemory
from mindspace.offline import OfflineLLM
from mindspace.state.semantic import SearchRequest
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on
from mindspace.testing.inspect import stored_records

_VOCABULARY = (
    "ale bread sword dragon market river coin inn storm harbor forge guard quest map cellar "
    "lantern rope merchant festival bridge tower forest wolf king queen thief song harp "
    "barrel cheese wine ship rain snow gate wall temple priest scroll potion"
)
WORDS = _VOCABULARY.split()


def _texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(WORDS), size=(n, 7))
    return [" ".join(WORDS[i] for i in row) + f" #{k}" for k, row in enumerate(picks)]


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 3),
    }


def _ingest(assistant: Assistant, texts: list[str], chunk: int = 5_000) -> float:
    start = time.perf_counter()
    for offset in range(0, len(texts), chunk):
        with assistant._core.transaction() as unit:
            memory = SemanticMemory(
                unit,
                assistant.clock,
                assistant.settings,
                assistant.embedder,
                assistant._core.memory_index,
            )
            memory.store_many([MemoryDraft(content=t) for t in texts[offset : offset + chunk]])
    return time.perf_counter() - start


async def _run_size(size: int, queries: int, workdir: Path) -> dict[str, Any]:
    embedder = HashingEmbedder(384)
    store = SqlStore.from_path(workdir / f"bench-{size}.db")
    assistant = assistant_on(
        store,
        f"bench-{size}",
        llm=OfflineLLM(announce=False),
        clock=ManualClock(),
        embedder=embedder,
    )
    texts = _texts(size, seed=size)
    build_seconds = _ingest(assistant, texts)
    index = assistant._core.memory_index
    load_start = time.perf_counter()
    index.ensure()
    index_build = time.perf_counter() - load_start

    memories = stored_records(assistant, Memory)
    matrix = np.stack([m.vector() for m in memories]).astype(np.float32)  # type: ignore[misc]
    ids = [m.id for m in memories]
    questions = _texts(queries, seed=size + 1)
    vectors = embedder.embed(questions)

    tool_times, index_times, numpy_times = [], [], []
    exact = 0
    overlap = 0.0
    near = 0
    for question, vector in zip(questions, vectors, strict=True):
        t0 = time.perf_counter()
        result = await assistant.call_tool("recall_memories", {"query": question, "limit": 10})
        tool_times.append(time.perf_counter() - t0)
        assert result["success"], result

        t0 = time.perf_counter()
        index.search(SearchRequest(question, vector), limit=10)
        index_times.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        sims = matrix @ vector
        top = np.argpartition(-sims, 10)[:10]
        brute = top[np.argsort(-sims[top])]
        numpy_times.append(time.perf_counter() - t0)

        dense = index.dense_scores(vector)
        assert dense is not None
        ours = {index.keys[r] for r in index.top(dense, index.mask(), 10)}
        truth = {ids[i] for i in brute}
        exact += len(ours & truth) == 10
        overlap += len(ours & truth) / 10
        # A swap only between near-ties (within the int8 codes' 0.005) is no miss.
        tenth = float(sims[brute[-1]])
        near += all(abs(float(sims[ids.index(k)]) - tenth) < 0.005 for k in ours ^ truth)
    store.close()
    numpy_p50 = statistics.median(numpy_times)
    return {
        "memories": size,
        "build_seconds": round(build_seconds, 2),
        "index_build_seconds": round(index_build, 3),
        "recall_memories": _percentiles(tool_times),
        "index_search": _percentiles(index_times),
        "numpy_topk": _percentiles(numpy_times),
        "overhead_ratio_p50": {
            "recall_memories_vs_numpy": round(statistics.median(tool_times) / numpy_p50, 1),
            "index_search_vs_numpy": round(statistics.median(index_times) / numpy_p50, 1),
        },
        "dense_top10_identical_to_brute_force": round(exact / queries, 4),
        "dense_recall_at_10_vs_brute_force": round(overlap / queries, 4),
        "dense_top10_equal_up_to_near_ties": round(near / queries, 4),
    }


def _minilm() -> Embedder | None:
    try:
        from mindspace.embeddings.minilm import MiniLMEmbedder
    except ImportError:
        return None
    try:
        embedder = MiniLMEmbedder()
        embedder.embed(["warm up"])
    except Exception:
        return None
    return embedder


def _ingestion(workdir: Path, count: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name, embedder in (("hashing", HashingEmbedder(384)), ("minilm", _minilm())):
        if embedder is None:
            results[name] = "not installed"
            continue
        store = SqlStore.from_path(workdir / f"ingest-{name}.db")
        assistant = assistant_on(
            store, "ingest", llm=OfflineLLM(announce=False), clock=ManualClock(), embedder=embedder
        )
        seconds = _ingest(assistant, _texts(count, seed=3), chunk=500)
        results[name] = {
            "memories": count,
            "seconds": round(seconds, 2),
            "memories_per_second": round(count / seconds, 1),
        }
        store.close()
    return results


def main() -> None:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ingest", type=int, default=2_000, help="memories for ingestion speed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        sizes = [asyncio.run(_run_size(size, args.queries, workdir)) for size in args.sizes]
        ingestion = _ingestion(workdir, args.ingest)
    print(
        json.dumps(
            {
                "benchmark": "memory_search",
                "machine": {"python": platform.python_version(), "cpu": platform.processor()},
                "queries_per_size": args.queries,
                "sizes": sizes,
                "ingestion": ingestion,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
