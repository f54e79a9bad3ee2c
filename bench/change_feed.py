"""Benchmark catching up with another process's write through the change feed. Prints JSON.

For each corpus size an assistant's SQLite file gets N memories (committed straight
through ``SqlStore.commit``, with random unit-length 384-d float32 vectors under the
hashing embedder's name). A reader assistant builds its search index and times warm
recalls (``views.search_memories``, the ``recall_memories`` tool end to end, a new
query each time so no cached result is reused). Then a writer - a second SqlStore and
Assistant on the same file, as another process would be - stores one memory with the
``store_memory`` tool, and the reader's first recall after it is timed: that recall
finds the revision moved, reads the change feed, reloads the one memory and the
documents the writer touched, and updates the index in place. This is repeated for
several writes. For comparison, the first recall after a full reload (what every write
by another process cost before the feed) is timed once. Usage::

    python bench/change_feed.py [--sizes 1000 10000 100000] [--warm 20] [--writes 5]
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
from mindspace.memory.records import Memory
from mindspace.offline import OfflineLLM
from mindspace.state import Change
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

DIM = 384
_VOCABULARY = (
    "ale bread sword dragon market river coin inn storm harbor forge guard quest map cellar "
    "lantern rope merchant festival bridge tower forest wolf king queen thief song harp"
)
WORDS = _VOCABULARY.split()


def _fill(store: SqlStore, key: str, size: int, embedder: str, chunk: int = 5_000) -> float:
    """Commit ``size`` memories with random unit vectors; returns the seconds it took."""
    info = store.open_assistant(key, create=True)
    rng = np.random.default_rng(size)
    revision = info.revision
    start = time.perf_counter()
    for offset in range(0, size, chunk):
        count = min(chunk, size - offset)
        vectors = rng.standard_normal((count, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        words = rng.integers(0, len(WORDS), size=(count, 6))
        changes = []
        for row in range(count):
            n = offset + row
            memory = Memory(
                id=f"m{n:07d}",
                content=" ".join(WORDS[i] for i in words[row]) + f" #{n}",
                created_at="2025-12-06T10:00:00Z",
                occurred_at="2025-12-06T10:00:00Z",
                embedder=embedder,
                embedding=vectors[row].tobytes(),
            )
            changes.append(Change("memory", memory.id, memory.to_stored(), new=True))
        revision = store.commit(info.id, revision, changes)
    return time.perf_counter() - start


async def _recall(assistant: Assistant, query: str) -> float:
    start = time.perf_counter()
    outcome = await assistant.views.search_memories({"query": query, "limit": 10})
    elapsed = time.perf_counter() - start
    assert outcome.result["success"], outcome.result
    assert not outcome.cached
    return elapsed


def _open(path: Path, key: str) -> tuple[SqlStore, Assistant]:
    store = SqlStore.from_path(path)
    assistant = assistant_on(
        store,
        key,
        llm=OfflineLLM(announce=False),
        clock=ManualClock(),
        embedder=HashingEmbedder(DIM),
    )
    return store, assistant


async def _run_size(size: int, warm_calls: int, writes: int, workdir: Path) -> dict[str, Any]:
    path = workdir / f"feed-{size}.db"
    key = f"bench-{size}"
    filler = SqlStore.from_path(path)
    fill_seconds = _fill(filler, key, size, HashingEmbedder(DIM).name)
    filler.close()

    reader_store, reader = _open(path, key)
    writer_store, writer = _open(path, key)
    start = time.perf_counter()
    await _recall(reader, "who sells bread at the market")
    cold_build = time.perf_counter() - start
    warm = [await _recall(reader, f"{WORDS[i % len(WORDS)]} query {i}") for i in range(warm_calls)]
    warm_p50 = statistics.median(warm)

    epoch = reader._core.state.epoch
    after_write: list[float] = []
    for n in range(writes):
        stored = await writer.call_tool("store_memory", {"content": f"Carol sings song {n}"})
        assert stored["success"], stored
        after_write.append(await _recall(reader, f"who sings song {n}"))
        # A few warm recalls between writes, as a host would make.
        for i in range(3):
            await _recall(reader, f"between {n} {i}")
    caught_up_without_reload = reader._core.state.epoch == epoch
    assert reader._core.memory_index.count() == size + writes

    # What a write by another process cost before the feed: drop everything, rebuild.
    await writer.call_tool("store_memory", {"content": "Dave fixes the roof"})
    reader._core.state._forget(reader_store.revision(reader._core.state.assistant_id))
    start = time.perf_counter()
    await _recall(reader, "who fixes the roof")
    full_reload = time.perf_counter() - start

    reader_store.close()
    writer_store.close()
    return {
        "memories": size,
        "fill_seconds": round(fill_seconds, 2),
        "cold_index_build_ms": round(cold_build * 1000, 1),
        "warm_recall_p50_ms": round(warm_p50 * 1000, 3),
        "first_recall_after_write_ms": [round(t * 1000, 3) for t in after_write],
        "first_recall_after_write_p50_ms": round(statistics.median(after_write) * 1000, 3),
        "ratio_first_write": round(after_write[0] / warm_p50, 2),
        "ratio_p50": round(statistics.median(after_write) / warm_p50, 2),
        "ratio_worst": round(max(after_write) / warm_p50, 2),
        "caught_up_without_reload": caught_up_without_reload,
        "first_recall_after_full_reload_ms": round(full_reload * 1000, 1),
    }


def main() -> None:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--warm", type=int, default=20, help="warm recalls for the median")
    parser.add_argument("--writes", type=int, default=5, help="writes by the other process")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sizes = [
            asyncio.run(_run_size(size, args.warm, args.writes, Path(tmp))) for size in args.sizes
        ]
    print(
        json.dumps(
            {
                "benchmark": "change_feed",
                "machine": {"python": platform.python_version(), "cpu": platform.processor()},
                "sizes": sizes,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
